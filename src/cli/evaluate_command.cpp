// tts-train evaluate: how close synthesized clips are to their references (docs/evaluate.md).
// Clips of the two folders are paired by id (the file's stem); each pair gets MCD, F0 RMSE and
// VDE on one DTW path (include/tts/eval/evaluate.h), and a CER when `--asr` transcribes the
// synthesized clip; OUT/evaluate.json and OUT/evaluate.tsv hold the figures and their means.
#include <stdlib.h>

#include <filesystem>
#include <memory>

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

void transcribe(const EvaluateArgs& args, const std::map<std::string, std::string>& texts,
                const std::map<std::string, std::string>& synthesized,
                std::vector<eval::UtteranceFigures>& figures) {
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
                                       args.text + " (id " + printable(u.id) + ")");
  }
}

int run_evaluate(const EvaluateArgs& args) {
  TTS_USAGE_CHECK(args.asr.empty() || !args.text.empty(),
                  "evaluate: --asr {} needs --text FILE (lines `id<TAB>text` or `id|text`): the "
                  "CER compares what the recognizer hears with the text",
                  args.asr);
  const auto reference = eval::find_clips(args.reference, "--reference");
  const auto synthesized = eval::find_clips(args.synthesized, "--synthesized");
  std::vector<std::string> matched, reference_only, synthesized_only;
  for (const auto& [id, path] : reference) {
    (synthesized.count(id) ? matched : reference_only).push_back(id);
  }
  for (const auto& [id, path] : synthesized) {
    if (reference.count(id) == 0) synthesized_only.push_back(id);
  }
  TTS_CHECK(!matched.empty(),
            "evaluate: no id has a clip in both folders; expected files of the same stem "
            "(a.wav and a.wav, or a.flac), found {} in --reference {} ({}) and {} in "
            "--synthesized {} ({})",
            reference.size(), printable(args.reference), first_names(reference_only),
            synthesized.size(), printable(args.synthesized), first_names(synthesized_only));
  auto logger = log::get("eval");
  if (!reference_only.empty()) {
    logger->warn("{} ids only in --reference {} (not evaluated): {}", reference_only.size(),
                 printable(args.reference), first_names(reference_only));
  }
  if (!synthesized_only.empty()) {
    logger->warn("{} ids only in --synthesized {} (not evaluated): {}", synthesized_only.size(),
                 printable(args.synthesized), first_names(synthesized_only));
  }
  std::map<std::string, std::string> speakers, texts;
  if (!args.speakers.empty()) speakers = eval::read_id_table(args.speakers, "speaker");
  if (!args.text.empty()) texts = eval::read_id_table(args.text, "text");

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
    if (auto it = speakers.find(id); it != speakers.end()) u.speaker = it->second;
    logger->info("{}: MCD {:.2f} dB, F0 RMSE {:.1f} Hz, VDE {:.3f} over {} frames", printable(id),
                 u.mcd_db, u.f0_rmse_hz, u.vde, u.frames);
    figures.push_back(std::move(u));
  }
  if (!args.asr.empty()) transcribe(args, texts, synthesized, figures);

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
                 "folder of the reference clips (.wav/.flac/.ogg), named by utterance id")
      ->required();
  app.add_option("--synthesized", args->synthesized,
                 "folder of the synthesized clips, named like their references")
      ->required();
  app.add_option("--out", args->out, "folder for evaluate.json and evaluate.tsv (created)")
      ->capture_default_str();
  app.add_option("--text", args->text,
                 "the texts: lines `id<TAB>text` or LJSpeech's `id|text|normalized` (for --asr)");
  app.add_option("--speakers", args->speakers,
                 "lines `id<TAB>speaker`: the report adds each speaker's means");
  app.add_option("--asr", args->asr,
                 "transcribe the synthesized clips and report their CER against --text")
      ->check(CLI::IsMember(eval::asr_names()));
  app.add_option("--asr-python", args->asr_python,
                 "the Python that has the recognizer's package (pip install pocketsphinx)")
      ->capture_default_str();
  app.footer(
      "Example:\n"
      "  tts-train evaluate --reference wavs/ --synthesized out/ --out eval/ \\\n"
      "      [--speakers speakers.tsv] [--text metadata.csv --asr pocketsphinx]");
  return [args]() { return run_evaluate(*args); };
}

}  // namespace

TTS_REGISTER_COMMAND("evaluate",
                     "MCD, F0 RMSE, VDE (and CER with --asr) of synthesized clips against their "
                     "references",
                     50, setup_evaluate);

}  // namespace tts::cli
