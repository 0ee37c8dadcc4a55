// tts-train data check: runs every check training makes on a feature store, over the whole store,
// and lists every problem (file and utterance id) on stdout; exits 1 if there is any.
#include <iostream>

#include "tts/cli/command.h"
#include "tts/core/logging.h"
#include "tts/data/store_check.h"

namespace tts::cli {
namespace {

Runner setup_data(CLI::App& app) {
  auto args = std::make_shared<ConfigArgs>();
  auto data_dir = std::make_shared<std::string>();
  app.require_subcommand(1);
  CLI::App* check = app.add_subcommand(
      "check",
      "check a feature store against a config: settings, lists and every .npy file (dtype, "
      "shape, size, NaN/Inf values)");
  args->add_to(*check, true);
  check->add_option("--data", *data_dir, "the feature store (the --output of tts-train preprocess)")
      ->required();
  check->footer(
      "Prints one line per problem on stdout, each naming the file and the utterance; exits 0 "
      "when the store is fine, 1 when there is any problem.");
  return [args, data_dir]() {
    config::Config config = args->load();
    auto logger = log::get("data");
    data::StoreCheckReport report = data::check_store(*data_dir, config);
    for (const auto& problem : report.problems) std::cout << problem << "\n";
    std::cout << std::flush;
    for (const auto& speaker : report.speakers) {
      logger->info("speaker {}: {} utterances ({} for training, {} for validation), {:.1f} min",
                   speaker.name.empty() ? "(unnamed)" : speaker.name, speaker.utterances,
                   speaker.train, speaker.val, speaker.minutes);
    }
    if (report.too_long > 0) {
      logger->info("data.max_frames={} will drop {} utterances", config.data.max_frames,
                   report.too_long);
    }
    if (!report.ok()) {
      logger->error("{}: {} problem{} in {} utterances ({} files)", *data_dir,
                    report.problems.size(), report.problems.size() == 1 ? "" : "s",
                    report.utterances, report.files);
      return 1;
    }
    logger->info("{}: {} utterances, {} files: no problems", *data_dir, report.utterances,
                 report.files);
    return 0;
  };
}

}  // namespace

TTS_REGISTER_COMMAND("data", "inspect feature stores: `data check --config CFG --data FEATS`", 30,
                     setup_data);

}  // namespace tts::cli
