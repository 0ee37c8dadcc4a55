// tts-train convert: NVIDIA/tacotron2 checkpoints in (--from nvidia FILE --config C --out OUT.pt)
// and out (--to nvidia CHECKPOINT --out FILE.pt, with the hparams NVIDIA's code needs);
// jik876/hifi-gan's in (--from hifigan g_XXXXXXXX [--do do_XXXXXXXX] [--hparams config.json]
// --out OUT.pt) and out (--to hifigan CHECKPOINT --out DIR: g_, do_ and config.json);
// r9y9/wavenet_vocoder's in (--from wavenet checkpoint.pth --hparams hparams.json --out OUT.pt) and
// out (--to wavenet CHECKPOINT --out DIR: checkpoint_stepN.pth, its _ema.pth and hparams.json).
#include <iostream>

#include "tts/checkpoint/checkpoint.h"
#include "tts/checkpoint/nvidia.h"
#include "tts/cli/command.h"
#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/core/logging.h"
#include "tts/models/hifigan/interop.h"
#include "tts/models/wavenet/family.h"
#include "tts/models/wavenet/r9y9.h"

namespace tts::cli {
namespace {

struct ConvertArgs {
  std::string from, to, input, out;
  std::string do_file, hparams;  // --from hifigan (--hparams also --from wavenet)
  ConfigArgs config;
};

int import_hifigan(const ConvertArgs& args) {
  TTS_USAGE_CHECK(!args.config.path.empty() || !args.hparams.empty(),
                  "convert --from hifigan needs the networks' sizes: --hparams config.json "
                  "(jik876's, beside its checkpoints) or --config C (ours, model.kind hifigan)");
  config::Config base = args.config.path.empty() ? config::Config{} : args.config.load();
  hifigan::HifiganImport imported =
      hifigan::import_jik876(args.input, args.do_file, args.hparams, base);
  config::Config config =
      args.hparams.empty() ? base : hifigan::hifigan_config_from_json(args.hparams, base);
  config.validate();
  checkpoint::Checkpoint checkpoint = hifigan::checkpoint_from_jik876(imported, config);
  checkpoint::write_checkpoint(args.out, checkpoint);
  if (args.do_file.empty()) {
    log::get("convert")->info(
        "imported {} into {}: fine-tune it with tts-train train --init-from {}; without --do "
        "the discriminators are newly initialized and AdamW's moments start afresh",
        args.input, args.out, args.out);
  } else {
    log::get("convert")->info(
        "imported {} and {} (step {}, epoch {}, both AdamW states) into {}: continue jik876's "
        "training with that file as RUN/checkpoints/step_{:08d}.pt and tts-train train --out RUN "
        "--resume, or fine-tune it with --init-from {} (fresh moments)",
        args.input, args.do_file, checkpoint.state.step, checkpoint.state.epoch, args.out,
        checkpoint.state.step, args.out);
  }
  return 0;
}

int export_hifigan(const ConvertArgs& args) {
  TTS_USAGE_CHECK(args.config.path.empty() && args.config.overrides.empty() &&
                      args.do_file.empty() && args.hparams.empty(),
                  "convert --to hifigan takes everything from the checkpoint; drop "
                  "--config/--set/--do/--hparams");
  std::string source;
  checkpoint::Checkpoint checkpoint = checkpoint::load_newest_checkpoint(args.input, &source);
  config::Config config = checkpoint::checkpoint_config(checkpoint, source);
  TTS_USAGE_CHECK(config.model.kind == config::ModelKind::kHifigan,
                  "{} is a model.kind {} checkpoint: --to hifigan exports HiFi-GAN checkpoints",
                  source, config.model.kind);
  hifigan::export_jik876(hifigan::jik876_from_checkpoint(checkpoint, config), args.out, config);
  if (config.hifigan.discriminator_divisor != 1) {
    log::get("convert")->warn(
        "hifigan.discriminator_divisor is {}: jik876's code loads the generator file, but not "
        "these narrower discriminators (do_); tts-train convert --from hifigan reads them back",
        config.hifigan.discriminator_divisor);
  }
  log::get("convert")->info("exported {} (step {}) to {}: g_{:08d}, do_{:08d}, config.json", source,
                            checkpoint.state.step, args.out, checkpoint.state.step,
                            checkpoint.state.step);
  return 0;
}

int import_wavenet(const ConvertArgs& args) {
  TTS_USAGE_CHECK(args.do_file.empty(), "--do is for --from hifigan");
  TTS_USAGE_CHECK(!args.hparams.empty(),
                  "convert --from wavenet needs --hparams hparams.json: r9y9's checkpoints do not "
                  "record the network's sizes (its train.py writes hparams.json beside them)");
  config::Config config = args.config.path.empty() ? config::Config{} : args.config.load();
  wavenet::WavenetImport imported = wavenet::import_r9y9(args.input, args.hparams);
  config.model.kind = config::ModelKind::kWavenet;
  config.wavenet = imported.wavenet;
  config.audio.sample_rate = imported.audio.sample_rate;
  config.audio.n_fft = imported.audio.n_fft;
  config.audio.hop_length = imported.audio.hop_length;
  config.audio.win_length = imported.audio.win_length;
  config.audio.n_mels = imported.audio.n_mels;
  config.audio.fmin = imported.audio.fmin;
  config.audio.fmax = imported.audio.fmax;
  config.audio.preemphasis = imported.audio.preemphasis;
  config.audio.waveforms = true;
  config.validate();
  checkpoint::Checkpoint checkpoint = wavenet::checkpoint_from_r9y9(imported, config);
  checkpoint::write_checkpoint(args.out, checkpoint);
  auto log = log::get("convert");
  log->info("imported {} (step {}) into {}: fine-tune it with tts-train train --init-from {}",
            args.input, checkpoint.state.step, args.out, args.out);
  log->warn(
      "r9y9's mels are log10 of the mel magnitude standardized by its training set's mean and "
      "variance, which tts-train's audio section does not make: as imported, the model vocodes "
      "only mels made r9y9's way; fine-tune it on a store of the acoustic model's mels (the "
      "sizes above are the hparams'; the compression is {}'s defaults)",
      args.config.path.empty() ? "tts-train" : args.config.path);
  return 0;
}

int export_wavenet(const ConvertArgs& args) {
  TTS_USAGE_CHECK(args.config.path.empty() && args.config.overrides.empty() &&
                      args.do_file.empty() && args.hparams.empty(),
                  "convert --to wavenet takes everything from the checkpoint; drop "
                  "--config/--set/--do/--hparams");
  std::string source;
  checkpoint::Checkpoint checkpoint = checkpoint::load_newest_checkpoint(args.input, &source);
  config::Config config = checkpoint::checkpoint_config(checkpoint, source);
  TTS_USAGE_CHECK(config.model.kind == config::ModelKind::kWavenet,
                  "{} is a model.kind {} checkpoint: --to wavenet exports WaveNet checkpoints",
                  source, config.model.kind);
  create_folder(args.out);
  const int64_t step = checkpoint.state.step;
  const std::string stem = fmt::format("{}/checkpoint_step{:09d}", args.out, step);
  const std::string hparams = args.out + "/hparams.json";
  const std::map<std::string, torch::Tensor> trained =
      checkpoint::tensors_with_prefix(checkpoint, "wavenet.");
  const std::map<std::string, torch::Tensor> averaged =
      checkpoint::tensors_with_prefix(checkpoint, "ema.");
  wavenet::export_r9y9(stem + ".pth", hparams, config.wavenet, config.audio, trained, step);
  if (!averaged.empty()) {
    wavenet::export_r9y9(stem + "_ema.pth", hparams, config.wavenet, config.audio, averaged, step);
  }
  log::get("convert")->info(
      "exported {} (step {}) to {}: checkpoint_step{:09d}.pth{}, hparams.json", source, step,
      args.out, step, averaged.empty() ? "" : fmt::format(" and its moving average _ema.pth"));
  return 0;
}

Runner setup_convert(CLI::App& app) {
  auto args = std::make_shared<ConvertArgs>();
  auto* from = app.add_option("--from", args->from,
                              "import: the input's format (nvidia: NVIDIA/tacotron2's train.py "
                              "checkpoint or a state dict; hifigan: jik876/hifi-gan's generator "
                              "file g_XXXXXXXX; wavenet: r9y9/wavenet_vocoder's checkpoint .pth)")
                   ->check(CLI::IsMember({"nvidia", "hifigan", "wavenet"}));
  auto* to = app.add_option("--to", args->to,
                            "export: the output's format (nvidia: NVIDIA/tacotron2's train.py "
                            "checkpoint; hifigan: a folder with jik876's g_, do_ and config.json; "
                            "wavenet: a folder with r9y9's checkpoint, its _ema and hparams.json)")
                 ->check(CLI::IsMember({"nvidia", "hifigan", "wavenet"}));
  from->excludes(to);
  app.add_option("input", args->input,
                 "import: NVIDIA's .pt file; export: our checkpoint (file, RUN/checkpoints/latest "
                 "or run directory)")
      ->required();
  app.add_option("--out", args->out, "the file to write (--to hifigan/wavenet: the folder)")
      ->required();
  app.add_option("--do", args->do_file,
                 "--from hifigan: jik876's training file do_XXXXXXXX (the discriminators, step "
                 "and epoch); without it the discriminators start from their initialization");
  app.add_option("--hparams", args->hparams,
                 "--from hifigan: jik876's config.json the files were trained with (else --config "
                 "alone says the networks' sizes); --from wavenet: r9y9's hparams.json (required)");
  args->config.add_to(app, false);
  return [args]() {
    TTS_USAGE_CHECK(!args->from.empty() || !args->to.empty(),
                    "convert: say the direction: --from nvidia FILE.pt --config C --out OUT.pt "
                    "(import) or --to nvidia CHECKPOINT --out FILE.pt (export)");
    auto log = log::get("convert");
    if (args->from == "hifigan") return import_hifigan(*args);
    if (args->to == "hifigan") return export_hifigan(*args);
    if (args->from == "wavenet") return import_wavenet(*args);
    if (args->to == "wavenet") return export_wavenet(*args);
    TTS_USAGE_CHECK(args->do_file.empty() && args->hparams.empty(),
                    "--do and --hparams are for --from hifigan (--hparams also --from wavenet)");
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
