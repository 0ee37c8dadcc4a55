// tts-train features: the training targets of one audio file as .npy, or a waveform back from a
// target by Griffin-Lim. Same trimming and settings as preprocessing (config section `audio`).
#include <torch/torch.h>

#include <memory>

#include "tts/audio/audio_io.h"
#include "tts/audio/audio_processor.h"
#include "tts/cli/command.h"
#include "tts/core/logging.h"
#include "tts/formats/npy.h"

namespace tts::cli {
namespace {

struct FeaturesArgs {
  ConfigArgs config;
  std::string wav;
  std::string mel;
  std::string linear;
  std::string griffin_lim;
};

void write_tensor(const std::string& path, const torch::Tensor& tensor) {
  torch::Tensor data = tensor.to(torch::kCPU, torch::kFloat32).contiguous();
  formats::write_npy(path, data.data_ptr<float>(), data.sizes().vec());
}

torch::Tensor read_target(const std::string& path, int64_t bins, const std::string& what) {
  formats::NpyArray array = formats::read_npy(path);
  TTS_CHECK(array.shape.size() == 2 && array.shape[1] == bins,
            "{}: expected a time-major [frames, {}] {} spectrogram, found shape [{}]{}", path, bins,
            what, fmt::join(array.shape, ", "),
            array.shape.size() == 2 && array.shape[0] == bins
                ? "; it looks transposed ([bins, frames]): save it as [frames, bins]"
                : "; check that the config's audio section is the one that produced it");
  return torch::from_blob(array.data.data(), array.shape, torch::kFloat32).clone();
}

int extract(const FeaturesArgs& args, const audio::AudioProcessor& processor) {
  const bool with_linear = !args.linear.empty();
  audio::Features features = processor.compute_file(args.wav, with_linear);
  write_tensor(args.mel, features.mel);
  if (with_linear) write_tensor(args.linear, features.linear);
  log::get("audio")->info("{}: {} samples kept, {} frames -> {}{}", args.wav, features.n_samples,
                          features.mel.size(0), args.mel,
                          with_linear ? " and " + args.linear : std::string());
  return 0;
}

int invert(const FeaturesArgs& args, const audio::AudioProcessor& processor) {
  const config::AudioOptions& options = processor.options();
  std::vector<float> samples =
      args.linear.empty()
          ? processor.mel_to_wav(read_target(args.mel, options.n_mels, "mel"))
          : processor.linear_to_wav(read_target(args.linear, options.n_linear(), "linear"));
  audio::write_wav(args.griffin_lim, samples, options.sample_rate);
  log::get("audio")->info("{}: {} samples at {} Hz ({} Griffin-Lim iterations)", args.griffin_lim,
                          samples.size(), options.sample_rate, options.griffin_lim_iters);
  return 0;
}

Runner setup_features(CLI::App& app) {
  auto args = std::make_shared<FeaturesArgs>();
  args->config.add_to(app, true);
  app.add_option("--wav", args->wav, "input audio file (WAV/FLAC/OGG) to analyse");
  app.add_option("--mel", args->mel,
                 "mel target .npy, [frames, n_mels] float32: written from --wav, or read for "
                 "--griffin-lim");
  app.add_option("--linear", args->linear,
                 "linear target .npy, [frames, n_fft/2+1]: written from --wav (whatever "
                 "audio.linear says), or read for --griffin-lim instead of --mel");
  app.add_option("--griffin-lim", args->griffin_lim,
                 "invert --mel (or --linear) by Griffin-Lim and write this 16-bit WAV");
  app.footer(
      "Examples:\n"
      "  tts-train features --config C.yaml --wav a.wav --mel a.mel.npy [--linear a.lin.npy]\n"
      "  tts-train features --config C.yaml --mel a.mel.npy --griffin-lim a.gl.wav");
  return [args]() {
    const bool analyse = !args->wav.empty();
    const bool synthesize = !args->griffin_lim.empty();
    TTS_USAGE_CHECK(analyse != synthesize,
                    "features: give either --wav IN (with --mel OUT) to extract targets, or "
                    "--griffin-lim OUT (with --mel IN or --linear IN) to invert one");
    if (analyse) {
      TTS_USAGE_CHECK(!args->mel.empty(), "features: --wav needs --mel OUT.npy");
    } else {
      TTS_USAGE_CHECK(args->mel.empty() != args->linear.empty(),
                      "features: --griffin-lim needs exactly one of --mel IN.npy or "
                      "--linear IN.npy");
    }
    config::Config config = args->config.load();
    audio::AudioProcessor processor(config.audio);
    return analyse ? extract(*args, processor) : invert(*args, processor);
  };
}

}  // namespace

TTS_REGISTER_COMMAND("features",
                     "compute the mel/linear targets of one audio file, or invert one by "
                     "Griffin-Lim",
                     40, setup_features);

}  // namespace tts::cli
