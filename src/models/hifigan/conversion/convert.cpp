// jik876/hifi-gan's files in (g_XXXXXXXX [do_XXXXXXXX] [config.json]) and out (a folder with g_,
// do_ and config.json): the family's converter (models/roles.h).
#include "tts/core/error.h"
#include "tts/core/logging.h"
#include "tts/models/hifigan/conversion/jik876.h"
#include "tts/models/hifigan/training/family.h"

namespace tts::hifigan {
namespace {

models::Imported import_files(const models::ConvertRequest& request) {
  TTS_USAGE_CHECK(request.config || !request.hparams.empty(),
                  "convert --from hifigan needs the networks' sizes: --hparams config.json "
                  "(jik876's, beside its checkpoints) or --config C (ours, model.kind hifigan)");
  config::Config base = request.config ? *request.config : config::Config{};
  HifiganImport imported = import_jik876(request.input, request.companion, request.hparams, base);
  config::Config config = imported.config;  // config.json read once, inside the import
  config.validate();
  models::Imported result{checkpoint_from_jik876(imported, config), ""};
  if (request.companion.empty()) {
    result.message = fmt::format(
        "imported {} into {{out}}: fine-tune it with tts-train train --init-from {{out}}; "
        "without --do the discriminators are newly initialized and AdamW's moments start afresh",
        request.input);
  } else {
    result.message = fmt::format(
        "imported {} and {} (step {}, epoch {}, both AdamW states) into {{out}}: continue "
        "jik876's training with that file as RUN/checkpoints/step_{:08d}.pt and tts-train train "
        "--out RUN --resume, or fine-tune it with --init-from {{out}} (fresh moments)",
        request.input, request.companion, result.checkpoint.state.step,
        result.checkpoint.state.epoch, result.checkpoint.state.step);
  }
  return result;
}

std::string export_files(const models::TrainedCheckpoint& trained, const std::string& out) {
  const config::Config& config = trained.config;
  export_jik876(jik876_from_checkpoint(trained.checkpoint, config), out, config);
  if (config.hifigan.discriminator_divisor != 1) {
    log::get("convert")->warn(
        "hifigan.discriminator_divisor is {}: jik876's code loads the generator file, but not "
        "these narrower discriminators (do_); tts-train convert --from hifigan reads them back",
        config.hifigan.discriminator_divisor);
  }
  const int64_t step = trained.checkpoint.state.step;
  return fmt::format("exported {} (step {}) to {}: g_{:08d}, do_{:08d}, config.json",
                     trained.source, step, out, step, step);
}

}  // namespace

models::Converter jik876_converter() {
  models::Converter converter;
  converter.format = "hifigan";
  converter.import_help =
      "jik876/hifi-gan's generator file g_XXXXXXXX, with --do do_XXXXXXXX (the discriminators, "
      "step, epoch and both AdamW states) and --hparams config.json (else --config says the "
      "sizes)";
  converter.export_help = "a folder with jik876's g_, do_ and config.json";
  converter.exports_folder = true;
  converter.takes_companion = true;
  converter.takes_hparams = true;
  converter.import_file = import_files;
  converter.export_file = export_files;
  return converter;
}

}  // namespace tts::hifigan
