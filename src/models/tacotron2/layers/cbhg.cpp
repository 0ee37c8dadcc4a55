#include "tts/models/tacotron2/layers/cbhg.h"

#include <torch/torch.h>

#include <cmath>
#include <vector>

#include "layer_init.h"
#include "tts/core/error.h"

namespace tts::tacotron2 {

CBHGImpl::CBHGImpl(const config::ModelOptions& options, int64_t in_dim, int64_t out_dim) {
  int64_t channels = options.cbhg_conv_channels;
  int64_t projection = options.cbhg_projection_dim;
  int64_t units = options.cbhg_rnn_units;
  for (int k = 1; k <= options.cbhg_kernels; ++k) {
    torch::nn::Conv1d conv(torch::nn::Conv1dOptions(in_dim, channels, k).padding(k / 2));
    bank_.push_back(register_module("bank" + std::to_string(k), conv));
    bank_norms_.push_back(
        register_module("bank_norm" + std::to_string(k), torch::nn::BatchNorm1d(channels)));
  }
  projection0_ = register_module(
      "projection0",
      torch::nn::Conv1d(
          torch::nn::Conv1dOptions(channels * options.cbhg_kernels, projection, 3).padding(1)));
  projection0_norm_ = register_module("projection0_norm", torch::nn::BatchNorm1d(projection));
  projection1_ = register_module(
      "projection1", torch::nn::Conv1d(torch::nn::Conv1dOptions(projection, in_dim, 3).padding(1)));
  projection1_norm_ = register_module("projection1_norm", torch::nn::BatchNorm1d(in_dim));
  highway_input_ = register_module("highway_input", torch::nn::Linear(in_dim, units));
  for (int i = 0; i < options.cbhg_highway_layers; ++i) {
    torch::nn::Linear h =
        register_module("highway" + std::to_string(i) + "_h", torch::nn::Linear(units, units));
    torch::nn::Linear t =
        register_module("highway" + std::to_string(i) + "_t", torch::nn::Linear(units, units));
    {
      // Rayhane's highway transform gate starts biased towards carrying the input.
      torch::NoGradGuard no_grad;
      t->bias.fill_(-1.0);
    }
    highways_.emplace_back(h, t);
  }
  gru_ = register_module(
      "gru",
      torch::nn::GRU(torch::nn::GRUOptions(units, units).batch_first(true).bidirectional(true)));
  output_ = register_module("output", torch::nn::Linear(2 * units, out_dim));
}

torch::Tensor CBHGImpl::forward(const torch::Tensor& x, const torch::Tensor& lengths,
                                const BatchContext& context) {
  int64_t frames = x.size(1);
  torch::Tensor valid = valid_multiplier(lengths, frames, x.options());  // [B, 1, T]
  torch::Tensor input = x.transpose(1, 2) * valid;                       // [B, C, T]
  std::vector<torch::Tensor> bank;
  for (size_t i = 0; i < bank_.size(); ++i) {
    // Even kernels give T + 1 outputs with symmetric padding; keep the first T.
    bank.push_back(
        torch::relu(conv_batch_norm(*bank_[i], *bank_norms_[i], input, valid, context, frames)));
  }
  torch::Tensor y = torch::cat(bank, 1) * valid;
  // Max-pooling of width 2, stride 1, keeping T frames: max of frames t and t + 1.
  y = torch::max_pool1d(F::pad(y, F::PadFuncOptions({0, 1})), 2, 1) * valid;
  y = torch::relu(conv_batch_norm(*projection0_, *projection0_norm_, y, valid, context)) * valid;
  y = (conv_batch_norm(*projection1_, *projection1_norm_, y, valid, context) + input) * valid;
  torch::Tensor h = highway_input_(y.transpose(1, 2));  // [B, T, units]
  for (auto& [transform, gate] : highways_) {
    torch::Tensor g = torch::sigmoid(gate(h));
    h = torch::relu(transform(h)) * g + h * (1 - g);
  }
  return output_(bidirectional_gru(gru_, h, lengths, gru_padding_)) * valid.transpose(1, 2);
}

}  // namespace tts::tacotron2
