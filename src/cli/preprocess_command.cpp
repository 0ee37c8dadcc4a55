// tts-train preprocess: a corpus (LJSpeech, VCTK, LibriTTS or CSV layout) -> a feature store.
#include <atomic>
#include <csignal>

#include "tts/cli/command.h"
#include "tts/data/preprocess.h"

namespace tts::cli {
namespace {

std::atomic<bool> stop_requested{false};

// The first Ctrl-C (or kill) lets finished utterances be recorded; a second one ends the process
// at once (the default action is restored).
void on_signal(int signal) {
  stop_requested = true;
  std::signal(signal, SIG_DFL);
}

Runner setup_preprocess(CLI::App& app) {
  auto args = std::make_shared<ConfigArgs>();
  auto request = std::make_shared<data::PreprocessRequest>();
  args->add_to(app, true);
  auto corpus = std::make_shared<std::string>();
  app.add_option("-i,--input", request->input_dir,
                 "the corpus folder, laid out as data.corpus (or --corpus) says; ljspeech: "
                 "metadata.csv (ID|raw|normalized) and wavs/ID.wav (or .flac, .ogg, .opus)")
      ->required();
  app.add_option("--corpus", *corpus,
                 "the corpus's layout, the same as --set data.corpus=LAYOUT: ljspeech, vctk, "
                 "libritts or csv (docs/corpora.md)");
  app.add_option("-o,--output", request->output_dir,
                 "feature store to write (created; a rerun resumes it)")
      ->required();
  app.add_option("-w,--workers", request->workers, "parallel workers (default: one per core)")
      ->check(CLI::NonNegativeNumber);
  app.footer(
      "Writes OUTPUT/mels/ID.npy ([frames, n_mels] float32), OUTPUT/linear/ID.npy with "
      "audio.linear, metadata.tsv, train.tsv, val.tsv (every speaker in both), speakers.tsv, "
      "errors.tsv and features.yaml. Inputs that "
      "cannot be used are listed in errors.tsv. Exit code 0 when the store is complete, 1 when "
      "nothing was kept or more than data.max_skip_fraction was skipped, 2 for a usage error, 130 "
      "when interrupted (rerun to finish).");
  return [args, request, corpus]() {
    if (!corpus->empty()) args->overrides.push_back("data.corpus=" + *corpus);
    config::Config config = args->load();
    request->stop = &stop_requested;
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    data::PreprocessSummary summary = data::preprocess_corpus(config, *request);
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    return summary.interrupted ? 130 : 0;
  };
}

}  // namespace

TTS_REGISTER_COMMAND("preprocess",
                     "corpus (LJSpeech, VCTK, LibriTTS, CSV) -> feature store (mels, speakers, "
                     "train/val split)",
                     10, setup_preprocess);

}  // namespace tts::cli
