// tts-train synthesize: text -> mel (and linear) -> Griffin-Lim or a vocoder -> WAV; with --plot,
// the alignment and mel plots that validation draws. The checkpoint's family speaks (its acoustic
// role, models/roles.h).
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <optional>

#include "tts/cli/command.h"
#include "tts/cli/outputs.h"
#include "tts/core/error.h"
#include "tts/inference/audio_sink.h"
#include "tts/models/registry.h"

namespace tts::cli {
namespace fs = std::filesystem;
namespace {

struct SynthesizeArgs {
  std::string checkpoint;
  std::string text;
  std::string text_file;
  std::string out;
  std::string vocoder;
  bool plot = false;
  int batch = 8;
  std::string speaker;
  std::string vocoder_speaker;
  bool stream = false;
  std::string format = "wav";
  std::string chunk = "8:64";
};

// Over 80 lines: one declaration per command-line option, with its help text.
Runner setup_synthesize(CLI::App& app) {
  auto args = std::make_shared<SynthesizeArgs>();
  app.add_option("--checkpoint", args->checkpoint,
                 "checkpoint file or RUN/checkpoints/latest (or a run directory)")
      ->required();
  auto* text = app.add_option("--text", args->text, "the sentence to speak");
  auto* file = app.add_option("--text-file", args->text_file, "one sentence per line");
  text->excludes(file);
  app.add_option("--out", args->out,
                 "output .wav (one sentence: STEM.wav, STEM.mel.npy beside it) or folder (N.wav, "
                 "N.mel.npy for sentence N: --text-file's line N; with several sentences --out is "
                 "always a folder). "
                 "The folder is created, the folders above it are not")
      ->required();
  app.add_option("--vocoder", args->vocoder,
                 "a vocoder checkpoint to speak the mels with instead of Griffin-Lim; refused "
                 "when the acoustic model's mel settings are not the vocoder's");
  app.add_option("--batch", args->batch,
                 "sentences decoded together (default 8); a sentence is spoken the same whatever "
                 "the batch")
      ->check(CLI::Range(1, 256));
  app.add_option("--speaker", args->speaker,
                 "the voice, by its name in the checkpoint's speaker table: required for a model "
                 "of several speakers, refused for a one-speaker model");
  app.add_option("--vocoder-speaker", args->vocoder_speaker,
                 "the voice of a --vocoder of several speakers, by its name in the vocoder's "
                 "speaker table (default: --speaker's name)");
  app.add_flag("--plot", args->plot,
               "also write STEM.alignment.png and STEM.mel.png (mel and stop-token probability)");
  app.add_flag("--stream", args->stream,
               "audio leaves as it is decoded: each STEM.wav grows chunk by chunk, or with --out - "
               "every sentence in turn goes to standard output (tts-train synthesize ... --stream "
               "--out - | aplay); the summary gives the time to the first audio");
  app.add_option("--format", args->format,
                 "with --stream --out -: wav (a WAV header, then 16-bit samples; default) or pcm16 "
                 "(raw 16-bit little-endian mono samples at the model's sample rate)");
  app.add_option(
      "--chunk", args->chunk,
      "with --stream: mel frames per chunk, FIRST[:MOST] - the first chunk FIRST frames, "
      "each next one twice the last up to MOST (default 8:64); the audio is the same "
      "whatever the chunks");
  return [args]() {
    std::vector<std::string> sentences;
    std::vector<size_t> numbers;  // each sentence's line in --text-file: blank lines keep theirs
    if (!args->text.empty()) sentences.push_back(args->text);
    if (!args->text_file.empty()) {
      std::ifstream in(args->text_file);
      TTS_USAGE_CHECK(in.good(), "cannot read --text-file '{}'", args->text_file);
      size_t number = 0;
      for (std::string line; std::getline(in, line);) {
        ++number;
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        sentences.push_back(line);
        numbers.push_back(number);
      }
    }
    TTS_USAGE_CHECK(!sentences.empty(),
                    "nothing to say: give --text \"...\" or a --text-file with sentences");
    // --out - is standard output, for a stream alone; its format is checked before anything
    // loads.
    const bool to_stdout = args->out == "-";
    TTS_USAGE_CHECK(
        !to_stdout || args->stream,
        "--out -: standard output takes audio as it is decoded: add --stream (or give a "
        "file ending in .wav, or a folder)");
    const inference::StreamFormat format = inference::parse_stream_format(args->format);
    TTS_USAGE_CHECK(
        format == inference::StreamFormat::kWav || to_stdout,
        "--format pcm16 is for --stream --out - (raw samples on standard output); files "
        "are WAV");
    const models::ChunkPlan chunks = models::parse_chunk_plan(args->chunk, "--chunk");
    // Where every output goes is checked before the model loads: sentence N is N.wav in a
    // folder, so two sentences never share a name.
    std::optional<OutTarget> target;
    if (!to_stdout) {
      target = out_target(args->out, sentences.size(), "sentence", {".wav"});
      OutputPlan plan(*target);
      auto number = [&](size_t i) { return numbers.empty() ? i + 1 : numbers[i]; };
      for (size_t i = 0; i < sentences.size(); ++i) {
        plan.add(target->folder ? (fs::path(args->out) / fmt::format("{}.wav", number(i))).string()
                                : args->out,
                 fmt::format("sentence {}", number(i)));
      }
      if (!args->text_file.empty()) plan.add_input(args->text_file, "--text-file");
      plan.check();
    }

    models::TrainedCheckpoint trained = models::read_trained(args->checkpoint);
    const models::FamilyEntry& family = models::family(trained.config.model.kind);
    TTS_USAGE_CHECK(family.acoustic.synthesize,
                    "{} is a model.kind {} checkpoint, which does not speak text{}", trained.source,
                    trained.config.model.kind,
                    family.load_vocoder ? ": it is a vocoder; give it as --vocoder beside the "
                                          "acoustic model's --checkpoint"
                                        : "");
    std::unique_ptr<models::Vocoder> vocoder;
    if (!args->vocoder.empty()) {
      vocoder = models::load_vocoder(args->vocoder, torch::kCPU);
      vocoder->check_mels(trained.config.audio,
                          fmt::format("the mels of checkpoint {}", args->checkpoint));
      // A vocoder of several speakers speaks as the acoustic model's voice unless told otherwise.
      const bool several = !vocoder->speakers().empty();
      vocoder->select_speaker(!args->vocoder_speaker.empty() ? args->vocoder_speaker
                              : several                      ? args->speaker
                                                             : "");
    }
    models::SynthesisRequest request;
    request.sentences = std::move(sentences);
    request.numbers = std::move(numbers);
    request.out = args->out;
    request.to_directory = target && target->folder;
    request.stream = args->stream;
    request.chunks = chunks;
    request.to_stdout = to_stdout;
    request.format = format;
    request.vocoder = vocoder.get();
    request.plot = args->plot;
    request.batch = args->batch;
    request.speaker = args->speaker;
    family.acoustic.synthesize(trained, request);
    return 0;
  };
}

}  // namespace

TTS_REGISTER_COMMAND("synthesize",
                     "speak text with a trained checkpoint (Griffin-Lim, or --vocoder)", 30,
                     setup_synthesize);

}  // namespace tts::cli
