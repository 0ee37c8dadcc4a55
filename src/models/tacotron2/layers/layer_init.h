// What the parts of Tacotron-2's network share inside src/models/tacotron2/: NVIDIA's weight
// initialization, dropout that is off in eval mode, padding multipliers, and packed RNNs.
#pragma once

#include <torch/torch.h>

#include <cmath>
#include <tuple>

#include "../kernels/autocast.h"
#include "tts/models/tacotron2/layers/recurrent.h"

namespace tts::tacotron2 {

namespace F = torch::nn::functional;

// Xavier-uniform weights with the gain torch.nn.init.calculate_gain gives the nonlinearity that
// follows (NVIDIA's LinearNorm and ConvNorm); biases keep PyTorch's default initialization.
inline constexpr double kGainLinear = 1.0;
inline const double kGainRelu = std::sqrt(2.0);
inline constexpr double kGainTanh = 5.0 / 3.0;

inline void xavier(torch::Tensor& weight, double gain) {
  torch::NoGradGuard no_grad;
  torch::nn::init::xavier_uniform_(weight, gain);
}

inline torch::nn::Linear make_linear(int64_t in, int64_t out, bool bias, double gain) {
  torch::nn::Linear linear(torch::nn::LinearOptions(in, out).bias(bias));
  xavier(linear->weight, gain);
  return linear;
}

inline torch::nn::Conv1d make_conv(int64_t in, int64_t out, int64_t kernel, bool bias,
                                   double gain) {
  torch::nn::Conv1d conv(torch::nn::Conv1dOptions(in, out, kernel).padding(kernel / 2).bias(bias));
  xavier(conv->weight, gain);
  return conv;
}

inline torch::Tensor maybe_dropout(const torch::Tensor& x, double p, bool training) {
  return training && p > 0 ? torch::dropout(x, p, true) : x;
}

// Padding mask [B, 1, T] as a float multiplier (1 = valid).
inline torch::Tensor valid_multiplier(const torch::Tensor& lengths, int64_t max_length,
                                      const torch::TensorOptions& options) {
  return padding_mask(lengths, max_length).logical_not().unsqueeze(1).to(options);
}

// pack_padded_sequence + RNN + pad_packed_sequence back to [B, T, C] with the original T.
// In fp32 at least, with autocast off: the recurrent state runs over every step (autocast.h), and
// libtorch's autocast of cuDNN's RNN casts to fp16 whatever autocast's dtype, bf16 included.
template <class Rnn>
inline torch::Tensor run_packed(Rnn& rnn, const torch::Tensor& x_in, const torch::Tensor& lengths) {
  namespace rnn_utils = torch::nn::utils::rnn;
  detail::NoAutocast no_autocast;
  const torch::Tensor x = detail::at_least_float(x_in);
  auto packed = rnn_utils::pack_padded_sequence(x, lengths.to(torch::kCPU).to(torch::kInt64),
                                                /*batch_first=*/true, /*enforce_sorted=*/false);
  auto output = std::get<0>(rnn->forward_with_packed_input(packed));
  return std::get<0>(rnn_utils::pad_packed_sequence(output, /*batch_first=*/true, 0.0, x.size(1)));
}

}  // namespace tts::tacotron2
