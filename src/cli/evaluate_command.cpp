// tts-train evaluate: how close synthesized clips are to their references (docs/evaluate.md).
// The clips come from two folders, or a checkpoint speaks a feature store's utterances
// (evaluate_checkpoint.cpp); either way they are paired by id (the file's stem), each pair gets
// MCD, F0 RMSE and VDE on one DTW path (include/tts/eval/evaluate.h), and a CER when `--asr`
// transcribes the synthesized clip; OUT/evaluate.json and OUT/evaluate.tsv hold the figures and
// their means.
#include <stdlib.h>

#include <filesystem>
#include <memory>

#include "evaluate_modes.h"
#include "tts/audio/audio_io.h"
#include "tts/cli/command.h"
#include "tts/core/fs.h"
#include "tts/core/logging.h"
#include "tts/core/printable.h"
#include "tts/eval/analysis.h"
#include "tts/eval/asr.h"
#include "tts/eval/evaluate.h"
#include "tts/eval/inputs.h"

namespace tts::cli {
namespace {

struct EvaluateArgs {
  std::string reference;
  std::string synthesized;
  std::string out = ".";
  std::string text;
  std::string speakers;
  std::string asr;
  std::string asr_python = "python3";
  CheckpointEvaluation checkpoint;  // the checkpoint mode when checkpoint.checkpoint is given
};

constexpr size_t kNamesShown = 5;

std::string first_names(const std::vector<std::string>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size() && i < kNamesShown; ++i)
    out += (i ? ", " : "") + printable(ids[i]);
  if (ids.size() > kNamesShown) out += ", ...";
  return out;
}

// A private folder for the 16 kHz copies the recognizer reads, removed when done.
class ScratchFolder {
 public:
  ScratchFolder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tts-evaluate-XXXXXX").string();
    TTS_CHECK(::mkdtemp(pattern.data()) != nullptr, "evaluate: cannot create a folder in {}",
              std::filesystem::temp_directory_path().string());
    path_ = pattern;
  }
  ~ScratchFolder() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void transcribe(const EvaluateArgs& args, const EvaluationClips& clips,
                std::vector<eval::UtteranceFigures>& figures) {
  const auto& texts = clips.texts;
  const auto& synthesized = clips.synthesized;
  ScratchFolder scratch;
  std::vector<std::string> wavs;
  std::vector<eval::UtteranceFigures*> targets;
  config::AudioOptions options;
  options.sample_rate = 16000;  // the en-us model's rate
  for (auto& u : figures) {
    if (texts.count(u.id) == 0) continue;
    const std::string wav = scratch.path() + "/" + std::to_string(wavs.size()) + ".wav";
    audio::write_wav(wav, audio::read_audio(synthesized.at(u.id), options), options.sample_rate);
    wavs.push_back(wav);
    targets.push_back(&u);
  }
  if (wavs.empty()) return;
  log::get("eval")->info("transcribing {} clips with pocketsphinx ({})", wavs.size(),
                         args.asr_python);
  const std::vector<std::string> transcripts =
      eval::transcribe_pocketsphinx(args.asr_python, wavs, scratch.path());
  for (size_t k = 0; k < targets.size(); ++k) {
    eval::UtteranceFigures& u = *targets[k];
    u.transcript = transcripts[k];
    u.cer = eval::character_error_rate(texts.at(u.id), u.transcript,
                                       clips.text_source + " (id " + printable(u.id) + ")");
  }
}

// The clips of the two-folder mode.
EvaluationClips folder_clips(const EvaluateArgs& args) {
  TTS_USAGE_CHECK(!args.reference.empty() && !args.synthesized.empty(),
                  "evaluate: expected --reference DIR and --synthesized DIR (two folders of "
                  "clips), or --checkpoint CKPT --data STORE; found {}",
                  args.reference.empty() ? "no --reference" : "no --synthesized");
  TTS_USAGE_CHECK(args.asr.empty() || !args.text.empty(),
                  "evaluate: --asr {} needs --text FILE (lines `id<TAB>text` or `id|text`): the "
                  "CER compares what the recognizer hears with the text",
                  args.asr);
  EvaluationClips clips;
  clips.reference = eval::find_clips(args.reference, "--reference");
  clips.synthesized = eval::find_clips(args.synthesized, "--synthesized");
  clips.reference_source = "--reference " + printable(args.reference);
  clips.synthesized_source = "--synthesized " + printable(args.synthesized);
  if (!args.speakers.empty()) clips.speakers = eval::read_id_table(args.speakers, "speaker");
  if (!args.text.empty()) clips.texts = eval::read_id_table(args.text, "text");
  clips.text_source = args.text;
  return clips;
}

// The clips of the checkpoint mode, after refusing the two-folder mode's options beside it.
EvaluationClips checkpoint_clips(const EvaluateArgs& args) {
  const CheckpointEvaluation& c = args.checkpoint;
  TTS_USAGE_CHECK(args.synthesized.empty(),
                  "evaluate: --checkpoint and --synthesized are two modes; expected one: "
                  "--checkpoint CKPT --data STORE synthesizes the clips itself, --reference DIR "
                  "--synthesized DIR compares clips already made");
  TTS_USAGE_CHECK(!c.data.empty(),
                  "evaluate: --checkpoint {} needs --data STORE, the feature store whose "
                  "utterances it speaks",
                  printable(c.checkpoint));
  TTS_USAGE_CHECK(args.speakers.empty() && args.text.empty(),
                  "evaluate: --checkpoint takes the speakers and texts from the store --data {}; "
                  "drop {}",
                  printable(c.data), args.speakers.empty() ? "--text" : "--speakers");
  CheckpointEvaluation with_out = c;
  with_out.reference = args.reference;
  with_out.out = args.out;
  EvaluationClips clips = synthesize_store_clips(with_out);
  if (args.asr.empty()) clips.texts.clear();
  return clips;
}

int run_evaluate(const EvaluateArgs& args) {
  const bool checkpoint_mode = !args.checkpoint.checkpoint.empty();
  if (!checkpoint_mode) {
    TTS_USAGE_CHECK(args.checkpoint.data.empty() && args.checkpoint.vocoder.empty(),
                    "evaluate: --data and --vocoder belong to the checkpoint mode; give "
                    "--checkpoint CKPT too");
  }
  const EvaluationClips clips = checkpoint_mode ? checkpoint_clips(args) : folder_clips(args);
  const auto& reference = clips.reference;
  const auto& synthesized = clips.synthesized;
  std::vector<std::string> matched, reference_only, synthesized_only;
  for (const auto& [id, path] : reference) {
    (synthesized.count(id) ? matched : reference_only).push_back(id);
  }
  for (const auto& [id, path] : synthesized) {
    if (reference.count(id) == 0) synthesized_only.push_back(id);
  }
  TTS_CHECK(!matched.empty(),
            "evaluate: no id has a clip in both folders; expected files of the same stem "
            "(a.wav and a.wav, or a.flac), found {} in {} ({}) and {} in {} ({})",
            reference.size(), clips.reference_source, first_names(reference_only),
            synthesized.size(), clips.synthesized_source, first_names(synthesized_only));
  auto logger = log::get("eval");
  if (!reference_only.empty()) {
    logger->warn("{} ids only in {} (not evaluated): {}", reference_only.size(),
                 clips.reference_source, first_names(reference_only));
  }
  if (!synthesized_only.empty()) {
    logger->warn("{} ids only in {} (not evaluated): {}", synthesized_only.size(),
                 clips.synthesized_source, first_names(synthesized_only));
  }

  create_folder(args.out);
  const std::string json_path = args.out + "/evaluate.json";
  const std::string tsv_path = args.out + "/evaluate.tsv";
  check_replaceable(json_path);
  check_replaceable(tsv_path);

  config::AudioOptions options;
  options.sample_rate = eval::kSampleRate;
  std::vector<eval::UtteranceFigures> figures;
  for (const std::string& id : matched) {
    eval::UtteranceFigures u =
        eval::compare_utterances(audio::read_audio(reference.at(id), options),
                                 audio::read_audio(synthesized.at(id), options), printable(id));
    u.id = id;
    if (auto it = clips.speakers.find(id); it != clips.speakers.end()) u.speaker = it->second;
    logger->info("{}: MCD {:.2f} dB, F0 RMSE {:.1f} Hz, VDE {:.3f} over {} frames", printable(id),
                 u.mcd_db, u.f0_rmse_hz, u.vde, u.frames);
    figures.push_back(std::move(u));
  }
  if (!args.asr.empty()) transcribe(args, clips, figures);

  eval::ReportContext context{reference_only, synthesized_only, args.asr};
  write_file_atomic(json_path, eval::report_json(figures, context));
  write_file_atomic(tsv_path, eval::report_tsv(figures));
  logger->info("{} utterances evaluated -> {} and {}", figures.size(), printable(json_path),
               printable(tsv_path));
  return 0;
}

Runner setup_evaluate(CLI::App& app) {
  auto args = std::make_shared<EvaluateArgs>();
  app.add_option("--reference", args->reference,
                 "folder of the reference clips (.wav/.flac/.ogg), named by utterance id; with "
                 "--checkpoint: the corpus's recordings, for a store that keeps no waveforms");
  app.add_option("--synthesized", args->synthesized,
                 "folder of the synthesized clips, named like their references");
  app.add_option("--checkpoint", args->checkpoint.checkpoint,
                 "an acoustic model's checkpoint that speaks the utterances of --data (instead of "
                 "--synthesized); its clips go to OUT/synthesized/ID.wav");
  app.add_option("--data", args->checkpoint.data,
                 "with --checkpoint: the feature store whose utterances, speakers, texts and "
                 "recordings are evaluated");
  app.add_option("--vocoder", args->checkpoint.vocoder,
                 "with --checkpoint: a vocoder checkpoint to speak the mels with "
                 "(default: Griffin-Lim)");
  app.add_option("--split", args->checkpoint.split, "with --checkpoint: val or train")
      ->check(CLI::IsMember({"val", "train"}))
      ->capture_default_str();
  app.add_option("--limit", args->checkpoint.limit,
                 "with --checkpoint: only the split's first N utterances (0: all)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--batch", args->checkpoint.batch,
                 "with --checkpoint: sentences decoded together, as synthesize --batch")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--out", args->out,
                 "folder for evaluate.json and evaluate.tsv (created); give RUN/eval for "
                 "`tts-train report RUN` to show the evaluation")
      ->capture_default_str();
  app.add_option("--text", args->text,
                 "the texts: lines `id<TAB>text` or LJSpeech's `id|text|normalized` (for --asr; "
                 "--checkpoint takes the store's)");
  app.add_option("--speakers", args->speakers,
                 "lines `id<TAB>speaker`: the report adds each speaker's means");
  app.add_option("--asr", args->asr,
                 "transcribe the synthesized clips and report their CER against --text (or the "
                 "store's texts)")
      ->check(CLI::IsMember(eval::asr_names()));
  app.add_option("--asr-python", args->asr_python,
                 "the Python that has the recognizer's package (pip install pocketsphinx)")
      ->capture_default_str();
  app.footer(
      "Example:\n"
      "  tts-train evaluate --reference wavs/ --synthesized out/ --out eval/ \\\n"
      "      [--speakers speakers.tsv] [--text metadata.csv --asr pocketsphinx]\n"
      "  tts-train evaluate --checkpoint RUN/checkpoints/latest --data feats/ \\\n"
      "      [--vocoder VOC] [--split val] [--limit N] --out RUN/eval");
  return [args]() { return run_evaluate(*args); };
}

}  // namespace

TTS_REGISTER_COMMAND("evaluate",
                     "MCD, F0 RMSE, VDE (and CER with --asr) of synthesized clips against their "
                     "references",
                     50, setup_evaluate);

}  // namespace tts::cli
