// HiFi-GAN as a vocoder (models/roles.h: the vocoder role): the trained generator on the asked
// device, in eval mode, turning a mel [frames, n_mels] into audio, a chunk of frames at a time.
#include <torch/torch.h>

#include "tts/core/error.h"
#include "tts/models/convolution_stream.h"
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
    field_ = receptive_field(trained.config.hifigan);
  }

  // Chunks of frames through the generator on windows with its receptive field's context
  // (receptive_field): any plan gives the whole mel's audio up to rounding.
  std::unique_ptr<models::VocoderStream> stream(const models::ChunkPlan& plan) override {
    const int64_t n_mels = config().audio.n_mels;
    auto network = [this](const torch::Tensor& frames) {
      torch::NoGradGuard no_grad;
      return generator_->forward(frames.t().unsqueeze(0).to(device_, torch::kFloat32))
          .to(torch::kCPU)
          .reshape({-1});
    };
    return std::make_unique<models::ConvolutionStream>(network, n_mels, config().audio.hop_length,
                                                       field_, plan);
  }

 private:
  torch::Device device_;
  Generator generator_{nullptr};
  models::ReceptiveField field_;
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
