// HiFi-GAN's generator (Kong et al. 2020), the architecture of jik876/hifi-gan's models.py in our
// own code: a 7-tap input convolution, per upsampling stage a leaky ReLU, a transposed
// convolution and the mean of parallel residual blocks (multi-receptive-field fusion), then a
// leaky ReLU, a 7-tap output convolution and tanh. Every convolution is weight-normed and trained
// as such (weight_g, weight_v), as jik876 trains it.
#pragma once

#include <torch/torch.h>

#include <vector>

#include "tts/models/frame_windows.h"
#include "tts/models/hifigan/layers/norm_conv.h"
#include "tts/models/hifigan/options.h"

namespace tts::hifigan {

// jik876's LRELU_SLOPE, every leaky ReLU's but the one before the output convolution (0.01).
inline constexpr double kLeakySlope = 0.1;

// One residual block of kernel k with its dilations: type 1 runs three pairs (dilated
// convolution, plain convolution) with leaky ReLUs before each, type 2 two dilated convolutions;
// every pair or convolution adds its input back. Parameters: convs1.N, convs2.N (type 1) or
// convs.N (type 2).
class ResBlockImpl : public torch::nn::Module {
 public:
  ResBlockImpl(config::HifiganResblock type, int64_t channels, int64_t kernel,
               const std::vector<int>& dilations);
  torch::Tensor forward(torch::Tensor x);

 private:
  std::vector<NormConv> dilated_;  // convs1 (type 1) or convs (type 2)
  std::vector<NormConv> plain_;    // convs2 (type 1 only)
};
TORCH_MODULE(ResBlock);

// Parameter names are jik876's state-dict keys: conv_pre.*, ups.N.*, resblocks.N.*, conv_post.*
// (each with bias, weight_g, weight_v), in its order.
class GeneratorImpl : public torch::nn::Module {
 public:
  GeneratorImpl(const config::HifiganOptions& options, int n_mels);
  // mel [B, n_mels, frames] -> audio [B, 1, frames * prod(upsample_rates)] in (-1, 1).
  torch::Tensor forward(const torch::Tensor& mel);

 private:
  int64_t n_mels_;
  NormConv conv_pre_{nullptr}, conv_post_{nullptr};
  std::vector<NormConv> ups_;
  std::vector<ResBlock> resblocks_;  // ups_.size() x kernels, stage-major
  int64_t kernels_;                  // parallel residual blocks per stage
};
TORCH_MODULE(Generator);

// The mel frames the generator of `options` reads on each side of an output sample, from its
// layers' shapes: what a chunk of frames needs around it to come out as from the whole mel.
models::ReceptiveField receptive_field(const config::HifiganOptions& options);

}  // namespace tts::hifigan
