// HiFi-GAN's discriminators as jik876/hifi-gan's models.py builds them, in our own code: the
// multi-period discriminator (periods 2, 3, 5, 7, 11: the waveform folded into [T/p, p] and read
// by 2-D convolutions along time) and the multi-scale discriminator (raw, x2 and x4 average-pooled
// waveforms; the first with spectral norm, the others with weight norm). Parameter and buffer
// names are jik876's state-dict keys (discriminators.N.convs.M.weight_v, ...).
#pragma once

#include <torch/torch.h>

#include <vector>

#include "tts/models/hifigan/layers/norm_conv.h"

namespace tts::hifigan {

// One entry per sub-discriminator, in jik876's order.
struct DiscriminatorScores {
  std::vector<torch::Tensor> real, fake;  // scores [B, N] (flattened) of y and of y_hat
  std::vector<std::vector<torch::Tensor>> real_features, fake_features;  // every layer's output
};

// Convolutions, each followed by a leaky ReLU, then a score convolution; its outputs on the way.
class SubDiscriminatorImpl : public torch::nn::Module {
 public:
  // period > 0: the multi-period discriminator's of that period; 0: a multi-scale one. `divisor`
  // (1, 2, 4 or 8) divides every hidden width: 1 is jik876's.
  SubDiscriminatorImpl(int64_t period, WeightNorm norm, int64_t divisor = 1);
  // x [B, 1, T] -> (score [B, N], features)
  std::pair<torch::Tensor, std::vector<torch::Tensor>> forward(torch::Tensor x);

 private:
  int64_t period_;
  std::vector<NormConv> convs_;
  NormConv conv_post_{nullptr};
};
TORCH_MODULE(SubDiscriminator);

// Each sub-discriminator is called on y, then on y_hat (not on both as one batch): a spectral
// norm's power iteration runs once per call, as in jik876's training.
class MultiPeriodDiscriminatorImpl : public torch::nn::Module {
 public:
  explicit MultiPeriodDiscriminatorImpl(int64_t divisor = 1);
  // y, y_hat [B, 1, T] -> the scores of its five sub-discriminators
  DiscriminatorScores forward(const torch::Tensor& y, const torch::Tensor& y_hat);

 private:
  std::vector<SubDiscriminator> discriminators_;
};
TORCH_MODULE(MultiPeriodDiscriminator);

class MultiScaleDiscriminatorImpl : public torch::nn::Module {
 public:
  explicit MultiScaleDiscriminatorImpl(int64_t divisor = 1);
  // y, y_hat [B, 1, T] -> the scores of its three sub-discriminators
  DiscriminatorScores forward(const torch::Tensor& y, const torch::Tensor& y_hat);

 private:
  std::vector<SubDiscriminator> discriminators_;
};
TORCH_MODULE(MultiScaleDiscriminator);

}  // namespace tts::hifigan
