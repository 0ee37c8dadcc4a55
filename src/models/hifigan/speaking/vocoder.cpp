// HiFi-GAN as a vocoder (models/roles.h: the vocoder role): the trained generator on the asked
// device, in eval mode, turning a mel [frames, n_mels] into audio.
#include <torch/torch.h>

#include "tts/core/error.h"
#include "tts/models/hifigan/layers/generator.h"
#include "tts/models/hifigan/training/family.h"

namespace tts::hifigan {
namespace {

class HifiganVocoder final : public models::Vocoder {
 public:
  HifiganVocoder(const models::TrainedCheckpoint& trained, const torch::Device& device)
      : Vocoder(trained), device_(device) {
    generator_ = trained_generator(trained);
    generator_->to(device_);
  }

  std::vector<float> vocode(const torch::Tensor& mel) override {
    const int64_t n_mels = config().audio.n_mels;
    TTS_CHECK(mel.dim() == 2 && mel.size(1) == n_mels,
              "vocode: expected a mel [frames, {}], found [{}]", n_mels,
              fmt::join(mel.sizes(), ", "));
    torch::NoGradGuard no_grad;
    torch::Tensor input = mel.t().unsqueeze(0).to(device_, torch::kFloat32);
    torch::Tensor audio = generator_->forward(input).reshape({-1}).to(torch::kCPU).contiguous();
    return {audio.data_ptr<float>(), audio.data_ptr<float>() + audio.numel()};
  }

 private:
  torch::Device device_;
  Generator generator_{nullptr};
};

}  // namespace

Generator trained_generator(const models::TrainedCheckpoint& trained) {
  Generator generator(trained.config.hifigan, trained.config.audio.n_mels);
  // The generator's tensors alone: a training checkpoint also holds the discriminators.
  checkpoint::Checkpoint generator_only;
  for (auto& item : checkpoint::tensors_with_prefix(trained.checkpoint, "generator.")) {
    generator_only.tensors.emplace_back(item);
  }
  checkpoint::restore_model(generator_only, *generator, trained.source);
  generator->eval();
  return generator;
}

std::unique_ptr<models::Vocoder> load_vocoder(const models::TrainedCheckpoint& trained,
                                              const torch::Device& device) {
  return std::make_unique<HifiganVocoder>(trained, device);
}

}  // namespace tts::hifigan
