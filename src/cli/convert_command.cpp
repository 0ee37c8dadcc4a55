// tts-train convert: NVIDIA/tacotron2 checkpoints in (--from nvidia FILE --config C --out OUT.pt)
// and out (--to nvidia CHECKPOINT --out FILE.pt, with the hparams NVIDIA's code needs).
#include <iostream>

#include "tts/checkpoint/checkpoint.h"
#include "tts/checkpoint/nvidia.h"
#include "tts/cli/command.h"
#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/core/logging.h"

namespace tts::cli {
namespace {

struct ConvertArgs {
  std::string from, to, input, out;
  ConfigArgs config;
};

Runner setup_convert(CLI::App& app) {
  auto args = std::make_shared<ConvertArgs>();
  auto* from = app.add_option("--from", args->from,
                              "import: the input's format (nvidia: NVIDIA/tacotron2's train.py "
                              "checkpoint or a state dict)")
                   ->check(CLI::IsMember({"nvidia"}));
  auto* to = app.add_option("--to", args->to,
                            "export: the output's format (nvidia: NVIDIA/tacotron2's train.py "
                            "checkpoint)")
                 ->check(CLI::IsMember({"nvidia"}));
  from->excludes(to);
  app.add_option("input", args->input,
                 "import: NVIDIA's .pt file; export: our checkpoint (file, RUN/checkpoints/latest "
                 "or run directory)")
      ->required();
  app.add_option("--out", args->out, "the file to write")->required();
  args->config.add_to(app, false);
  return [args]() {
    TTS_USAGE_CHECK(!args->from.empty() || !args->to.empty(),
                    "convert: say the direction: --from nvidia FILE.pt --config C --out OUT.pt "
                    "(import) or --to nvidia CHECKPOINT --out FILE.pt (export)");
    auto log = log::get("convert");
    if (!args->from.empty()) {
      TTS_USAGE_CHECK(!args->config.path.empty(),
                      "convert --from nvidia needs --config: the config of the model to fill "
                      "(its dimensions must fit the file's; text.symbol_set: nvidia for NVIDIA's "
                      "embedding)");
      config::Config config = args->config.load();
      checkpoint::Checkpoint checkpoint = checkpoint::import_nvidia(args->input, config);
      checkpoint::write_checkpoint(args->out, checkpoint);
      log->info("imported {} ({} tensors, iteration {}) into {}", args->input,
                checkpoint.tensors.size(), checkpoint.state.step, args->out);
      return 0;
    }
    TTS_USAGE_CHECK(args->config.path.empty() && args->config.overrides.empty(),
                    "convert --to nvidia takes the model's config from the checkpoint; drop "
                    "--config/--set");
    std::string source;
    checkpoint::Checkpoint checkpoint = checkpoint::load_newest_checkpoint(args->input, &source);
    std::string hparams = checkpoint::export_nvidia(checkpoint, args->out);
    write_file_atomic(args->out + ".hparams", hparams + "\n");
    log->info("exported {} (step {}) to {}; NVIDIA's hparams (also in {}.hparams) follow", source,
              checkpoint.state.step, args->out, args->out);
    std::cout << hparams << "\n";
    return 0;
  };
}

}  // namespace

TTS_REGISTER_COMMAND("convert",
                     "import NVIDIA/tacotron2 checkpoints (--from nvidia) or export ours to its "
                     "format (--to nvidia)",
                     65, setup_convert);

}  // namespace tts::cli
