// r9y9/wavenet_vocoder's files in (checkpoint .pth + hparams.json) and out (a folder with its
// checkpoint, the moving average's _ema.pth and hparams.json): the family's converter
// (models/roles.h).
//
// Note [r9y9's speaker rows]: r9y9's checkpoints keep a speaker embedding (gin_channels > 0) as
// rows without names; its preprocessing numbers a corpus's speakers as our store does (speakers.tsv
// `id`: names in order), and a run of ours from scratch gives row i to the store's speaker of id
// i. So an export writes the rows in the checkpoint's speaker-table order and logs which name each
// row stands for, and an import records no speaker table: `vocode` then takes a row number, and
// `train --init-from` on a store gives row i to the store's speaker of id i.
#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/core/logging.h"
#include "tts/models/wavenet/conversion/r9y9.h"
#include "tts/models/wavenet/training/family.h"

namespace tts::wavenet {
namespace {

// What r9y9's hparams say of the audio (R9y9Hparams::audio), over `into`: r9y9's mels are its own
// (see the warning below), so the rest of the audio section stays the config's.
void adopt_hparams_audio(const config::AudioOptions& hparams, config::AudioOptions& into) {
  into.sample_rate = hparams.sample_rate;
  into.n_fft = hparams.n_fft;
  into.hop_length = hparams.hop_length;
  into.win_length = hparams.win_length;
  into.n_mels = hparams.n_mels;
  into.fmin = hparams.fmin;
  into.fmax = hparams.fmax;
  into.preemphasis = hparams.preemphasis;
  into.waveforms = true;  // a vocoder trains on them
}

models::Imported import_files(const models::ConvertRequest& request) {
  TTS_USAGE_CHECK(!request.hparams.empty(),
                  "convert --from wavenet needs --hparams hparams.json: r9y9's checkpoints do not "
                  "record the network's sizes (its train.py writes hparams.json beside them)");
  config::Config config = request.config ? *request.config : config::Config{};
  WavenetImport imported = import_r9y9(request.input, request.hparams);
  config.model.kind = config::ModelKind::kWavenet;
  config.wavenet = imported.wavenet;
  adopt_hparams_audio(imported.audio, config.audio);
  config.validate();
  models::Imported result{checkpoint_from_r9y9(imported, config), ""};
  result.message = fmt::format(
      "imported {} (step {}) into {{out}}: fine-tune it with tts-train train --init-from {{out}}",
      request.input, result.checkpoint.state.step);
  if (config.wavenet.gin_channels > 0) {
    result.message += fmt::format(
        "; its speaker embedding's {} rows have no names (r9y9's files keep none): vocode takes a "
        "row number, and a run started from it gives row i to its store's speaker of id i "
        "(speakers.tsv)",
        config.wavenet.n_speakers);
  }
  log::get("convert")->warn(
      "r9y9's mels are log10 of the mel magnitude standardized by its training set's mean and "
      "variance, which tts-train's audio section does not make: as imported, the model vocodes "
      "only mels made r9y9's way; fine-tune it on a store of the acoustic model's mels (the "
      "sizes above are the hparams'; the compression is {}'s defaults)",
      request.config ? request.config_path : std::string("tts-train"));
  return result;
}

std::string export_files(const models::TrainedCheckpoint& trained, const std::string& out) {
  const config::Config& config = trained.config;
  create_folder(out);
  const int64_t step = trained.checkpoint.state.step;
  const std::string stem = fmt::format("{}/checkpoint_step{:09d}", out, step);
  const std::string hparams = out + "/hparams.json";
  const std::map<std::string, torch::Tensor> network =
      checkpoint::tensors_with_prefix(trained.checkpoint, "wavenet.");
  const std::map<std::string, torch::Tensor> averaged =
      checkpoint::tensors_with_prefix(trained.checkpoint, "ema.");
  export_r9y9(stem + ".pth", hparams, config.wavenet, config.audio, network, step);
  if (!averaged.empty()) {
    export_r9y9(stem + "_ema.pth", hparams, config.wavenet, config.audio, averaged, step);
  }
  std::string message = fmt::format(
      "exported {} (step {}) to {}: checkpoint_step{:09d}.pth{}, hparams.json", trained.source,
      step, out, step, averaged.empty() ? "" : " and its moving average _ema.pth");
  const std::vector<std::string>& speakers = trained.checkpoint.speakers;
  if (!speakers.empty()) {  // Note [r9y9's speaker rows]
    std::vector<std::string> rows;
    for (size_t i = 0; i < speakers.size(); ++i) {
      rows.push_back(fmt::format("row {}: {}", i, speakers[i]));
    }
    message += fmt::format("; the speaker embedding's rows (r9y9's speaker ids) are {}",
                           fmt::join(rows, ", "));
  }
  return message;
}

}  // namespace

models::Converter r9y9_converter() {
  models::Converter converter;
  converter.format = "wavenet";
  converter.import_help =
      "r9y9/wavenet_vocoder's checkpoint .pth, with --hparams hparams.json (required)";
  converter.export_help = "a folder with r9y9's checkpoint, its _ema and hparams.json";
  converter.exports_folder = true;
  converter.takes_hparams = true;
  converter.import_file = import_files;
  converter.export_file = export_files;
  return converter;
}

}  // namespace tts::wavenet
