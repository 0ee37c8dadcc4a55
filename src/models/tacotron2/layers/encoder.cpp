#include "tts/models/tacotron2/layers/encoder.h"

#include <torch/torch.h>

#include <cmath>
#include <vector>

#include "layer_init.h"
#include "tts/core/error.h"

namespace tts::tacotron2 {

EncoderImpl::EncoderImpl(const config::ModelOptions& options)
    : p_dropout_(options.p_encoder_dropout), zero_padding_(options.zero_padding_in_convolutions) {
  int64_t channels = options.encoder_embedding_dim;
  int64_t in = options.symbols_embedding_dim;
  for (int i = 0; i < options.encoder_n_convolutions; ++i) {
    convolutions_.push_back(
        register_module("conv" + std::to_string(i),
                        make_conv(in, channels, options.encoder_kernel_size, true, kGainRelu)));
    norms_.push_back(register_module("norm" + std::to_string(i), torch::nn::BatchNorm1d(channels)));
    in = channels;
  }
  lstm_ = register_module(
      "lstm",
      torch::nn::LSTM(
          torch::nn::LSTMOptions(channels, channels / 2).batch_first(true).bidirectional(true)));
}

torch::Tensor EncoderImpl::forward(const torch::Tensor& embedded, const torch::Tensor& lengths,
                                   const BatchContext& context) {
  const torch::Tensor real = valid_multiplier(lengths, embedded.size(1), embedded.options());
  // NVIDIA's convolutions see the padding symbol's embedding (multiplier 1 everywhere).
  torch::Tensor valid = zero_padding_ ? real : torch::ones({1, 1, 1}, embedded.options());
  torch::Tensor x = embedded.transpose(1, 2) * valid;  // [B, C, T]
  for (size_t i = 0; i < convolutions_.size(); ++i) {
    torch::Tensor y = conv_batch_norm(*convolutions_[i], *norms_[i], x, real, context);
    x = channels_first_dropout(torch::relu(y), p_dropout_, is_training(),
                               dropout_layer::kEncoder + i, lengths, context) *
        valid;
  }
  return bidirectional_lstm(lstm_, x.transpose(1, 2), lengths, recurrent_products_, lstm_padding_);
}

}  // namespace tts::tacotron2
