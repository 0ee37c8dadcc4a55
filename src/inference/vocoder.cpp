#include "tts/inference/vocoder.h"

#include <torch/torch.h>

#include <filesystem>

#include "tts/audio/mel_settings.h"
#include "tts/checkpoint/checkpoint.h"
#include "tts/core/error.h"
#include "tts/data/feature_store.h"
#include "tts/formats/npy.h"
#include "tts/models/hifigan/generator.h"
#include "tts/models/wavenet/family.h"
#include "tts/models/wavenet/generate.h"

namespace tts::inference {
namespace fs = std::filesystem;

void Vocoder::check_mels(const config::AudioOptions& made_with, const std::string& what) const {
  audio::MismatchWording wording{
      fmt::format("{} were made with", what), fmt::format("vocoder {} was trained on", source_),
      [&](const std::string& key, const std::string& made, const std::string& expected) {
        return fmt::format(
            "make the mels with {}: {} (the acoustic model's config, then its training or "
            "tts-train preprocess), or use a vocoder trained on {}={} (fine-tune this one on a "
            "store made with those settings: tts-train train --config VOCODER.yaml --data STORE "
            "--init-from {})",
            key, expected, key, made, source_);
      }};
  std::vector<std::string> lines =
      audio::mel_settings_mismatches(made_with, config_.audio, wording);
  if (lines.empty()) return;
  throw UsageError(fmt::format(
      "{} do not match the vocoder's ({} setting{}); it would turn them into noise:\n  {}", what,
      lines.size(), lines.size() == 1 ? "" : "s", fmt::join(lines, "\n  ")));
}

namespace {

class HifiganVocoder final : public Vocoder {
 public:
  HifiganVocoder(const checkpoint::Checkpoint& checkpoint, config::Config config,
                 std::string source, const torch::Device& device)
      : device_(device) {
    config_ = std::move(config);
    source_ = std::move(source);
    step_ = checkpoint.state.step;
    generator_ = hifigan::Generator(config_.hifigan, config_.audio.n_mels);
    // The generator's tensors alone: a training checkpoint also holds the discriminators.
    checkpoint::Checkpoint generator_only;
    for (auto& item : checkpoint::tensors_with_prefix(checkpoint, "generator.")) {
      generator_only.tensors.emplace_back(item);
    }
    checkpoint::restore_model(generator_only, *generator_, source_);
    generator_->to(device_);
    generator_->eval();
  }

  std::vector<float> vocode(const torch::Tensor& mel) override {
    TTS_CHECK(mel.dim() == 2 && mel.size(1) == config_.audio.n_mels,
              "vocode: expected a mel [frames, {}], found [{}]", config_.audio.n_mels,
              fmt::join(mel.sizes(), ", "));
    torch::NoGradGuard no_grad;
    torch::Tensor input = mel.t().unsqueeze(0).to(device_, torch::kFloat32);
    torch::Tensor audio = generator_->forward(input).reshape({-1}).to(torch::kCPU).contiguous();
    return {audio.data_ptr<float>(), audio.data_ptr<float>() + audio.numel()};
  }

 private:
  torch::Device device_;
  hifigan::Generator generator_{nullptr};
};

// WaveNet: the checkpoint's moving average when it keeps one (r9y9 synthesizes with it),
// generated incrementally on the CPU (models/wavenet/generate.h) with the run's seed.
class WavenetVocoder final : public Vocoder {
 public:
  WavenetVocoder(const checkpoint::Checkpoint& checkpoint, config::Config config,
                 std::string source) {
    config_ = std::move(config);
    source_ = std::move(source);
    step_ = checkpoint.state.step;
    network_ = wavenet::WaveNet(config_.wavenet, config_.audio.n_mels);
    wavenet::load_wavenet_state_dict(*network_, wavenet::synthesis_tensors(checkpoint), source_);
    network_->eval();
  }

  std::vector<float> vocode(const torch::Tensor& mel) override {
    TTS_CHECK(mel.dim() == 2 && mel.size(1) == config_.audio.n_mels,
              "vocode: expected a mel [frames, {}], found [{}]", config_.audio.n_mels,
              fmt::join(mel.sizes(), ", "));
    torch::NoGradGuard no_grad;
    torch::Tensor input = wavenet::pad_mel(mel.t().unsqueeze(0).to(torch::kFloat32).contiguous(),
                                           config_.wavenet.cin_pad);
    torch::Tensor audio =
        wavenet::generate(network_, input, static_cast<uint64_t>(config_.train.seed))
            .reshape({-1})
            .contiguous();
    return {audio.data_ptr<float>(), audio.data_ptr<float>() + audio.numel()};
  }

 private:
  wavenet::WaveNet network_{nullptr};
};

}  // namespace

std::unique_ptr<Vocoder> load_vocoder(const std::string& path, const torch::Device& device) {
  std::string source;
  checkpoint::Checkpoint checkpoint = checkpoint::load_newest_checkpoint(path, &source);
  config::Config config = checkpoint::checkpoint_config(checkpoint, source);
  switch (config.model.kind) {
    case config::ModelKind::kHifigan:
      return std::make_unique<HifiganVocoder>(checkpoint, std::move(config), source, device);
    case config::ModelKind::kWavenet:
      // Generation runs on the CPU whatever the device (generate.h): nothing to place.
      return std::make_unique<WavenetVocoder>(checkpoint, std::move(config), source);
    case config::ModelKind::kTacotron2:
      throw UsageError(fmt::format(
          "{} is a Tacotron-2 checkpoint (model.kind tacotron2), not a vocoder: give it as "
          "--checkpoint, and a HiFi-GAN or WaveNet checkpoint as --vocoder",
          source));
  }
  throw UsageError(
      fmt::format("{}: model.kind {} cannot vocode in this build", source, config.model.kind));
}

torch::Tensor read_mel_npy(const std::string& path, int64_t n_mels) {
  formats::NpyArray array = formats::read_npy(path);
  std::vector<int64_t> shape = array.shape;
  if (shape.size() == 3 && shape[0] == 1) shape.erase(shape.begin());
  TTS_CHECK(shape.size() == 2 && (shape[0] == n_mels || shape[1] == n_mels),
            "{}: expected a mel of {} channels, [frames, {}] (tts-train's layout) or [{}, frames] "
            "(NVIDIA's and jik876's), found shape [{}]",
            path, n_mels, n_mels, n_mels, fmt::join(array.shape, ", "));
  torch::Tensor mel = torch::from_blob(array.data.data(), shape, torch::kFloat32).clone();
  // Ours when the columns are the mel channels; else channels first.
  return shape[1] == n_mels ? mel : mel.t().contiguous();
}

std::optional<config::AudioOptions> mel_settings_of(const std::string& path,
                                                    std::string* store_dir) {
  std::error_code error;
  fs::path folder = fs::path(path).parent_path();
  if (folder.empty()) folder = ".";
  for (const fs::path& candidate : {folder, folder.parent_path()}) {
    if (candidate.empty() || !fs::is_regular_file(candidate / "features.yaml", error)) continue;
    data::StoreSettings settings = data::read_store_settings(candidate.string());
    if (store_dir != nullptr) *store_dir = candidate.string();
    return settings.config.audio;
  }
  return std::nullopt;
}

}  // namespace tts::inference
