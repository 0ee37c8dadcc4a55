// NVIDIA/tacotron2's files in (its train.py checkpoint or a state dict, into the model --config
// describes) and out (its train.py checkpoint, with the hparams its code needs beside it): the
// family's converter (models/roles.h).
#include <iostream>

#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/core/logging.h"
#include "tts/models/tacotron2/conversion/nvidia.h"
#include "tts/models/tacotron2/training/family.h"

namespace tts::tacotron2 {
namespace {

models::Imported import_files(const models::ConvertRequest& request) {
  TTS_USAGE_CHECK(request.config.has_value(),
                  "convert --from nvidia needs --config: the config of the model to fill (its "
                  "dimensions must fit the file's; text.symbol_set: nvidia for NVIDIA's "
                  "embedding)");
  models::Imported result{import_nvidia(request.input, *request.config), ""};
  result.message = fmt::format("imported {} ({} tensors, iteration {}) into {{out}}", request.input,
                               result.checkpoint.tensors.size(), result.checkpoint.state.step);
  return result;
}

std::string export_files(const models::TrainedCheckpoint& trained, const std::string& out) {
  std::string hparams = export_nvidia(trained.checkpoint, out);
  write_file_atomic(out + ".hparams", hparams + "\n");
  log::get("convert")->info(
      "exported {} (step {}) to {}; NVIDIA's hparams (also in {}.hparams) follow", trained.source,
      trained.checkpoint.state.step, out, out);
  // NVIDIA's train.py takes them on its command line: printed for copying.
  std::cout << hparams << "\n";
  return "";
}

}  // namespace

models::Converter nvidia_converter() {
  models::Converter converter;
  converter.format = "nvidia";
  converter.import_help =
      "NVIDIA/tacotron2's train.py checkpoint or a state dict, into the model --config describes";
  converter.export_help = "NVIDIA/tacotron2's train.py checkpoint (its hparams in FILE.hparams)";
  converter.import_file = import_files;
  converter.export_file = export_files;
  return converter;
}

}  // namespace tts::tacotron2
