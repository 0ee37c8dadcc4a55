#include "tts/models/tacotron2/layers/postnet.h"

#include <torch/torch.h>

#include <cmath>
#include <vector>

#include "layer_init.h"
#include "tts/core/error.h"

namespace tts::tacotron2 {

PostnetImpl::PostnetImpl(const config::ModelOptions& options, int64_t n_mels)
    : p_dropout_(options.p_postnet_dropout),
      zero_padding_(options.zero_padding_in_convolutions),
      nvidia_gradient_(options.nvidia_postnet_gradient) {
  int n = options.postnet_n_convolutions;
  int64_t channels = options.postnet_embedding_dim;
  for (int i = 0; i < n; ++i) {
    bool last = i == n - 1;
    int64_t in = i == 0 ? n_mels : channels;
    int64_t out = last ? n_mels : channels;
    convolutions_.push_back(register_module(
        "conv" + std::to_string(i),
        make_conv(in, out, options.postnet_kernel_size, true, last ? kGainLinear : kGainTanh)));
    norms_.push_back(register_module("norm" + std::to_string(i), torch::nn::BatchNorm1d(out)));
  }
}

torch::Tensor PostnetImpl::forward(const torch::Tensor& mel, const torch::Tensor& lengths,
                                   const BatchContext& context) {
  torch::Tensor valid = valid_multiplier(lengths, mel.size(1), mel.options());
  torch::Tensor x = mel.transpose(1, 2);
  for (size_t i = 0; i < convolutions_.size(); ++i) {
    if (i == 0 && nvidia_gradient_ && !zero_padding_ && is_training() && mel.requires_grad()) {
      // conv(w, x) = conv(w, x * valid) + conv(w without gradient, x * (1 - valid)): the same
      // output and input gradient, the weight gradient from the zeroed input only.
      const torch::Tensor& weight = convolutions_[0]->weight;
      torch::Tensor masked = x * valid;
      torch::Tensor padded_part =
          torch::conv1d(x - masked, weight.detach(), {}, 1, weight.size(2) / 2);
      x = batch_norm(*norms_[0], convolutions_[0](masked) + padded_part, valid, context);
    } else {
      x = conv_batch_norm(*convolutions_[i], *norms_[i], zero_padding_ ? x * valid : x, valid,
                          context);
    }
    if (i + 1 < convolutions_.size()) x = torch::tanh(x);
    x = channels_first_dropout(x, p_dropout_, is_training(), dropout_layer::kPostnet + i, lengths,
                               context);
  }
  return (x * valid).transpose(1, 2);
}

models::ReceptiveField PostnetImpl::receptive_field() const {
  // Every convolution is make_conv's: `same` padding of its kernel, no dilation.
  models::ReceptiveField field;
  for (const torch::nn::Conv1d& conv : convolutions_) {
    const int64_t kernel = conv->options.kernel_size()->at(0);
    field.convolution(kernel, conv->options.dilation()->at(0), kernel / 2);
  }
  return field;
}

}  // namespace tts::tacotron2
