// tts-train inspect CKPT [--json]: what a checkpoint holds, for comparing runs
// (models/inspect.h).
#include <iostream>
#include <memory>
#include <string>

#include "tts/cli/command.h"
#include "tts/models/inspect.h"

namespace tts::cli {
namespace {

Runner setup_inspect(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  app.add_option("checkpoint", *path,
                 "a checkpoint file, RUN/checkpoints/latest, or a run or checkpoints directory")
      ->required();
  app.add_flag("--json", *json,
               "print one JSON object instead of text: step, epoch, world_size, batch_size, "
               "model, the family's fields, audio (the audio section), config (every section), "
               "symbols, params, metrics, tensors");
  return [path, json]() {
    const models::CheckpointReport report = models::inspect_checkpoint(*path);
    std::cout << (*json ? models::report_json(report) : models::report_text(report));
    return 0;
  };
}

}  // namespace

TTS_REGISTER_COMMAND("inspect",
                     "show a checkpoint: step, world size, audio settings, config, every tensor's "
                     "L2",
                     60, setup_inspect);

}  // namespace tts::cli
