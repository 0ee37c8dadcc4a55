#include "tts/audio/griffin_lim.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <cmath>

#include "tts/core/error.h"

namespace tts::audio {

GriffinLim::GriffinLim(Stft stft, int iterations, double momentum, uint64_t seed)
    : stft_(std::move(stft)), iterations_(iterations), momentum_(momentum), seed_(seed) {
  TTS_CHECK(iterations >= 1 && momentum >= 0 && momentum < 1,
            "griffin-lim: expected iterations >= 1 and momentum in [0, 1), found {} and {}",
            iterations, momentum);
}

torch::Tensor GriffinLim::reconstruct(const torch::Tensor& magnitude, int64_t length) const {
  TTS_CHECK(magnitude.dim() == 2 && magnitude.size(1) == stft_.n_bins() && magnitude.size(0) >= 2,
            "griffin-lim: expected a [frames >= 2, {}] magnitude, found shape {}", stft_.n_bins(),
            magnitude.sizes().vec());
  const int64_t frames = magnitude.size(0);
  if (length < 0) length = stft_.n_samples(frames);
  const torch::Tensor target = magnitude.to(torch::kFloat32);
  at::Generator generator = at::detail::createCPUGenerator(seed_);
  torch::Tensor phase = 2.0 * M_PI * torch::rand(target.sizes(), generator, torch::kFloat32);
  torch::Tensor angles = torch::polar(torch::ones_like(phase), phase).to(target.device());
  torch::Tensor rebuilt = torch::zeros_like(angles);
  const double blend = momentum_ / (1.0 + momentum_);
  for (int i = 0; i < iterations_; ++i) {
    torch::Tensor previous = rebuilt;
    rebuilt = stft_.forward(stft_.inverse(target * angles, length));
    angles = rebuilt - blend * previous;
    angles = angles / (angles.abs() + 1e-16);
  }
  return stft_.inverse(target * angles, length);
}

double spectral_convergence(const torch::Tensor& estimate, const torch::Tensor& target) {
  TTS_CHECK(estimate.sizes() == target.sizes(), "spectral convergence: shapes differ: {} vs {}",
            estimate.sizes().vec(), target.sizes().vec());
  return ((estimate - target).norm() / target.norm()).item<double>();
}

}  // namespace tts::audio
