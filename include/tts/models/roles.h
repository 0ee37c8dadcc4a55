// What a trained family does beyond training, as small interfaces a family fills in its
// FamilyEntry (models/registry.h): a vocoder turns mels into audio; an acoustic model speaks text
// and writes ground-truth-aligned mels; converters read and write other frameworks' files; and
// `forward` runs a checkpoint's network on named arrays. The commands (src/cli/) parse their
// arguments and dispatch here through the registry; they know no family.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tts/checkpoint/checkpoint.h"
#include "tts/config/config.h"
#include "tts/inference/audio_sink.h"
#include "tts/models/frame_windows.h"

namespace tts::models {

// A checkpoint read for inference: the file's contents, its config (sized by its family before
// anything is built: models::read_trained) and the file that was read.
struct TrainedCheckpoint {
  checkpoint::Checkpoint checkpoint;
  config::Config config;
  std::string source;
};

// One utterance's mel turned into audio as its frames come: frames in, the samples that are final
// out. The samples of every push, concatenated, are the utterance's audio.
class VocoderStream {
 public:
  virtual ~VocoderStream() = default;
  // Takes the utterance's next frames [n, n_mels] (CPU float32; n may be 0), `last` with its final
  // ones, and returns the samples made final by them: frames * hop in all once `last` came.
  // Throws tts::Error for frames of another channel count or a push after the last.
  virtual std::vector<float> push(const torch::Tensor& frames, bool last) = 0;
};

// A trained vocoder, loaded once, with the settings of the mels it was trained on, and the mel
// match check: it refuses mels made with other settings (sample rate, hop, n_fft/window, mel
// count, fmin/fmax, mel scale and norm, compression and its floor), naming each differing value on
// both sides and the fix, before it generates anything. `vocode`, `synthesize --vocoder` and the
// training of a vocoder on a store (data/feature_store.h) compare through the same
// audio::mel_settings_mismatches.
class Vocoder {
 public:
  virtual ~Vocoder() = default;
  // The checkpoint's config: audio.* are the settings of the mels it was trained on.
  const config::Config& config() const { return config_; }
  const std::string& source() const { return source_; }
  int64_t step() const { return step_; }

  // Throws UsageError when mels made with `made_with` are not what this vocoder was trained on:
  // one line per differing setting, both values, and the fix. `what` names the mels ("the mels
  // of a.npy", "the mels of checkpoint T").
  void check_mels(const config::AudioOptions& made_with, const std::string& what) const;

  // The voices of a vocoder of several speakers, by name in row order (its checkpoint's speaker
  // table); empty for a one-speaker vocoder.
  virtual std::vector<std::string> speakers() const { return {}; }
  // Chooses the voice vocode() speaks in, by name (vocode --speaker NAME; empty: none given).
  // Throws UsageError for a name given to a one-speaker vocoder and, for one of several, for no
  // name or a name not in its table (listing them); call it before the first vocode().
  virtual void select_speaker(const std::string& name);

  // Audio samples [frames * hop] at config().audio.sample_rate from `mel` [frames, n_mels] (CPU,
  // float32): the stream of a whole plan fed the whole mel. Throws tts::Error for a mel of
  // another channel count.
  std::vector<float> vocode(const torch::Tensor& mel);

  // The mel's audio as its frames come (VocoderStream), computed in chunks of `plan`; any plan
  // gives the audio vocode() gives, up to rounding.
  virtual std::unique_ptr<VocoderStream> stream(const ChunkPlan& plan) = 0;

 protected:
  explicit Vocoder(const TrainedCheckpoint& trained)
      : config_(trained.config), source_(trained.source), step_(trained.checkpoint.state.step) {}

 private:
  config::Config config_;
  std::string source_;
  int64_t step_ = 0;
};

using VocoderLoader =
    std::function<std::unique_ptr<Vocoder>(const TrainedCheckpoint&, const torch::Device&)>;

// What `synthesize` asks of an acoustic model: speak each sentence into `out` (a .wav when
// `to_directory` is false, else DIR/N.wav), with its mel beside it (STEM.mel.npy) and, with
// `plot`, its pictures; through `vocoder` when given (its mel check already passed), else the
// family's own rendering (Griffin-Lim).
struct SynthesisRequest {
  std::vector<std::string> sentences;
  // Sentence i's number in its messages and its output's name (N.wav in a folder): its line in a
  // --text-file, so a blank line shifts nothing; empty: i + 1.
  std::vector<size_t> numbers;
  // Sentence i's number, as `numbers` says.
  size_t number(size_t i) const { return numbers.empty() ? i + 1 : numbers.at(i); }
  std::string out;
  bool to_directory = false;
  Vocoder* vocoder = nullptr;
  bool plot = false;
  // Sentences decoded together (each stops at its own stop token; what the model's inference
  // draws at random is keyed by the sentence, so a sentence is spoken the same in any batch).
  int batch = 8;
  // The voice of a model of several speakers, by its name in the checkpoint's speaker table
  // (synthesize --speaker); empty: the model's only one.
  std::string speaker;
  // synthesize --stream: each sentence's audio leaves in chunks of `chunks` as it is decoded, to
  // its growing STEM.wav or, with `to_stdout`, every sentence in turn to standard output as
  // `format` (raw samples or one WAV). Otherwise each sentence is spoken whole.
  bool stream = false;
  ChunkPlan chunks = ChunkPlan::streaming();
  bool to_stdout = false;
  inference::StreamFormat format = inference::StreamFormat::kWav;
};

// What `gta` asks of an acoustic model: ground-truth-aligned (teacher-forced) mels of a feature
// store, for vocoder fine-tuning.
struct GtaRequest {
  std::string checkpoint;  // ours: a file, RUN/checkpoints/latest or a run directory
  std::string data_dir;    // the feature store (its config must fit the checkpoint's)
  std::string out_dir;     // DIR/ID.npy [n_mels, frames] float32, DIR/filelist.txt and, when
                           // the store keeps waveforms, a feature store (the family's gta says)
  std::string wavs_dir;    // the corpus the store was made from, or empty: then the store's
                           // waveforms, else the corpus its features.yaml records; no
                           // filelist is made without one
  // wavs_dir's layout (data.corpus); nullopt: the layout the store records, else the
  // checkpoint's config's (its data.csv_* keys describe a CSV corpus either way).
  std::optional<config::CorpusLayout> corpus;
  // The dropout the model keeps on in inference (Tacotron-2's prenet): true: each utterance's
  // masks from its own stream (the checkpoint's seed and step, its id), so that a rerun and any
  // worker count give the same mels; false: none.
  bool inference_dropout = true;
  int rank = 0;  // this process handles the utterances i with i % world_size == rank
  int world_size = 1;
  int local_rank = 0;  // selects the GPU as a training rank's (dist::rank_device)
  int local_world_size = 1;
};

struct GtaSummary {
  int64_t written = 0;  // mels computed by this process
  int64_t reused = 0;   // already complete in out_dir (a resumed run)
};

// A sentence for an acoustic model to speak.
struct Utterance {
  std::vector<int64_t> ids;  // its symbols (text::TextProcessor::speakable_ids)
  // What its decoding draws at random (Tacotron-2's prenet dropout) is keyed by this (synthesize:
  // the checkpoint's seed and step and the cleaned sentence): the same key speaks the same alone,
  // in any batch and on a rerun.
  std::string key;
  int64_t speaker = -1;  // its row of the speaker embedding; -1 for a one-speaker model
};

// Final mel frames [n, n_mels] (CPU float32) of utterance `utterance`; `last` with its final ones.
struct MelChunk {
  size_t utterance = 0;
  torch::Tensor mel;
  bool last = false;
};

// What an utterance's decoding left besides its mel chunks, once the last came: for its files
// and plots (CPU float32).
struct DecodedUtterance {
  torch::Tensor mel;        // [frames, n_mels]: the chunks, concatenated
  torch::Tensor stop;       // [frames] stop-token probabilities
  torch::Tensor alignment;  // [decoder steps, text symbols]
  torch::Tensor linear;     // [frames, bins] of a linear head, else undefined
  bool stopped = true;      // false: no stop token before model.max_decoder_steps
};

// An acoustic model decoding utterances together, one decoder step at a time ("continuous
// batching"): an added utterance joins the batch at a step boundary while a row is free, and
// leaves it when it ends, so that a batch never waits for its longest; each utterance is decoded
// as it would be alone (up to rounding). Its frames leave in chunks (ChunkPlan) as soon as they
// are final.
class SpeechDecoder {
 public:
  virtual ~SpeechDecoder() = default;
  // Queues `utterance`; returns its number (0, 1, ... in the order added).
  virtual size_t add(Utterance utterance) = 0;
  // One decoder step of every row, after the queued utterances took the free rows: the chunks it
  // made final, in utterance order.
  virtual std::vector<MelChunk> step() = 0;
  // Nothing decoding and nothing queued.
  virtual bool idle() const = 0;
  // Utterances decoding now.
  virtual int64_t decoding() const = 0;
  // Moves out what utterance `number` left (DecodedUtterance), once its last chunk came; empty
  // tensors when asked twice.
  virtual DecodedUtterance take(size_t number) = 0;
};

// How a SpeechDecoder decodes: rows decoding at once, and the chunks its frames leave in.
struct SpeechSettings {
  int64_t rows = 8;
  ChunkPlan chunks;
};

// An acoustic model's inference; a family without the role leaves them empty.
struct AcousticRole {
  std::function<void(const TrainedCheckpoint&, const SynthesisRequest&)> synthesize;
  std::function<GtaSummary(const TrainedCheckpoint&, const GtaRequest&)> gta;
  // The model of a checkpoint as a SpeechDecoder on the CPU.
  std::function<std::unique_ptr<SpeechDecoder>(const TrainedCheckpoint&, const SpeechSettings&)>
      speech;
};

// What `tts-train convert` hands a converter: the input (the foreign file to import, or our
// checkpoint to export) and what to write, the format's companion files, and the user's config
// (--config/--set) when given.
struct ConvertRequest {
  std::string input;
  std::string out;
  std::string companion;  // --do: a second file the format keeps beside the first
  std::string hparams;    // --hparams: the format's own file of hyperparameters
  std::optional<config::Config> config;
  std::string config_path;  // where `config` came from, for messages
};

// What an import made: the checkpoint `convert` writes, and the line it logs after writing it.
struct Imported {
  checkpoint::Checkpoint checkpoint;
  std::string message;  // "{out}" in it is replaced by the written file
};

// Note [Exported tensor prefixes]: a checkpoint names a family's tensors by the modules of its
// train::Family::module(): HiFi-GAN's "generator.", "mpd.", "msd."; WaveNet's "wavenet." and its
// moving average's "ema."; Tacotron-2's at the top level ("encoder.", "decoder.", ...). A vocoder
// loader, a converter and `forward` select what they need by those prefixes
// (checkpoint::tensors_with_prefix), and the peers' files hold the same tensors with the prefix
// removed (jik876's g_ file is "generator." without it; r9y9's checkpoint and _ema are "wavenet."
// and "ema."). Renaming a module of a family renames its checkpoint's tensors: the conversion tests
// catch it.

// One foreign format a family reads (`convert --from FORMAT`) and writes (`--to FORMAT`).
struct Converter {
  std::string format;       // the name after --from / --to
  std::string import_help;  // what --from FORMAT reads
  std::string export_help;  // what --to FORMAT writes
  bool takes_companion = false;
  bool takes_hparams = false;
  // Whether --to FORMAT writes a folder of several files (--out names the folder) rather than one.
  bool exports_folder = false;
  std::function<Imported(const ConvertRequest&)> import_file;
  // Writes `trained` (already checked to be of the converter's family) to `out`; returns the line
  // to log (empty: it logged what it wrote itself).
  std::function<std::string(const TrainedCheckpoint& trained, const std::string& out)> export_file;
};

// `tts-train forward`: the network of a checkpoint on named inputs, its named outputs. Inputs and
// outputs are float32 arrays (integer inputs such as symbol ids are read from floats).
struct ForwardArray {
  std::string name;
  std::string layout;  // what it holds, for messages and --help
  bool required = true;
};
struct ForwardRole {
  std::vector<ForwardArray> inputs;
  std::vector<ForwardArray> outputs;
  std::function<std::map<std::string, torch::Tensor>(
      const TrainedCheckpoint&, const std::map<std::string, torch::Tensor>& inputs)>
      run;
};

}  // namespace tts::models
