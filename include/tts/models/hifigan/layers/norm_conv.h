// The convolutions of HiFi-GAN with their weights reparameterized as jik876/hifi-gan trains them:
// weight norm (torch.nn.utils.weight_norm, dim 0) or spectral norm (torch.nn.utils.spectral_norm,
// one power iteration per forward in training mode). The parameters and buffers carry PyTorch's
// names and registration order (bias, then weight_g and weight_v, or weight_orig with the buffers
// weight_u and weight_v), so that jik876's state dicts load by name and its optimizer states, which
// index parameters by position, line up.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace tts::hifigan {

enum class ConvKind { kConv1d, kConv2d, kTransposed1d };
enum class WeightNorm { kWeight, kSpectral };

// One convolution's shape; kernel, stride, padding and dilation have one entry per spatial
// dimension.
struct ConvSpec {
  ConvKind kind = ConvKind::kConv1d;
  int64_t in_channels = 1;   // input channels
  int64_t out_channels = 1;  // output channels
  std::vector<int64_t> kernel, stride, padding, dilation;
  int64_t groups = 1;  // channel groups (the multi-scale discriminator's)
};

// A 1-D convolution as jik876's Conv1d(in, out, kernel, stride, dilation=..., padding=...).
ConvSpec conv1d(int64_t in, int64_t out, int64_t kernel, int64_t stride = 1, int64_t padding = 0,
                int64_t dilation = 1, int64_t groups = 1);

class NormConvImpl : public torch::nn::Module {
 public:
  // Initialized as PyTorch initializes the plain convolution before the norm wraps it.
  NormConvImpl(ConvSpec spec, WeightNorm norm);
  torch::Tensor forward(const torch::Tensor& x);
  // The weight the convolution applies (in training mode with spectral norm this runs the power
  // iteration, as a forward does).
  torch::Tensor weight();

 private:
  ConvSpec spec_;
  WeightNorm norm_;
  torch::Tensor bias_;
  torch::Tensor direction_;  // weight norm: weight_v; spectral norm: weight_orig
  torch::Tensor magnitude_;  // weight norm: weight_g [out, 1, ...]; spectral norm: undefined
  torch::Tensor u_, v_;      // spectral norm's power-iteration vectors (buffers weight_u, weight_v)
};
TORCH_MODULE(NormConv);

}  // namespace tts::hifigan
