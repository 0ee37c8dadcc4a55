#include "tts/models/tacotron2/layers/recurrent.h"

#include <torch/torch.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "../kernels/autocast.h"
#include "layer_init.h"
#include "tts/core/error.h"

namespace tts::tacotron2 {

torch::Tensor padding_mask(const torch::Tensor& lengths, int64_t max_length) {
  auto positions = torch::arange(max_length, lengths.options().dtype(torch::kInt64));
  return positions.unsqueeze(0) >= lengths.to(torch::kInt64).unsqueeze(1);
}

// ---------------------------------------------------------------------------------------------

RecurrencePaths recurrence_paths(const torch::Device& device, bool cuda_graphs) {
  if (cuda_graphs) return {RnnPadding::kMasked, RnnPadding::kMasked};
  if (device.is_cuda()) return {RnnPadding::kPacked, RnnPadding::kPacked};
  return {RnnPadding::kMasked, RnnPadding::kPacked};
}

namespace {

// Per time step, [B, hidden] multipliers in x's dtype: 1 where the step is within the item's
// length, 0 at padding. Made on x's device from the lengths there (no host read).
std::vector<torch::Tensor> step_masks(const torch::Tensor& x, const torch::Tensor& lengths,
                                      int64_t hidden) {
  const int64_t batch = x.size(0), time = x.size(1);
  torch::Tensor valid = torch::arange(time, x.options().dtype(torch::kInt64))
                            .unsqueeze(0)
                            .lt(lengths.to(x.device(), torch::kInt64).unsqueeze(1))
                            .to(x.dtype());  // [B, T]
  return valid.t().unsqueeze(2).expand({time, batch, hidden}).contiguous().unbind(0);
}

// A recurrence's input projections for all steps at once, one [B, G] tensor a step:
// bias + x [B, T, in] @ weight_ih.t() ([G, in]), G = gates x hidden.
std::vector<torch::Tensor> input_projections(const torch::Tensor& x, const torch::Tensor& weight_ih,
                                             const torch::Tensor& bias) {
  const int64_t batch = x.size(0), time = x.size(1), gates = weight_ih.size(0);
  return torch::addmm(bias, x.reshape({batch * time, -1}), weight_ih.t())
      .view({batch, time, gates})
      .transpose(0, 1)
      .contiguous()
      .unbind(0);
}

}  // namespace

torch::Tensor bidirectional_lstm(torch::nn::LSTM& lstm, const torch::Tensor& x,
                                 const torch::Tensor& lengths, RecurrentProductPath path,
                                 RnnPadding padding) {
  TTS_CHECK(lstm->options.bidirectional() && lstm->options.num_layers() == 1 &&
                lstm->options.batch_first() && lstm->options.bias() &&
                lstm->options.proj_size() == 0,
            "bidirectional_lstm: expected a one-layer, bidirectional, batch-first LSTM with biases "
            "and no projection");
  if (padding == RnnPadding::kPacked) return run_packed(lstm, x, lengths);
  auto params = lstm->named_parameters(/*recurse=*/false);
  int64_t batch = x.size(0), time = x.size(1), hidden = lstm->options.hidden_size();
  const std::vector<torch::Tensor> masks = step_masks(x, lengths, hidden);
  std::vector<torch::Tensor> outputs;
  for (bool reverse : {false, true}) {
    std::string suffix = reverse ? "_l0_reverse" : "_l0";
    // Input projections and both biases for all steps at once: T of [B, 4H].
    const std::vector<torch::Tensor> input_gates = input_projections(
        x, params["weight_ih" + suffix], params["bias_ih" + suffix] + params["bias_hh" + suffix]);
    RecurrentWeight recurrent = make_step_weight(path, params["weight_hh" + suffix]);
    torch::Tensor h = torch::zeros({batch, hidden}, x.options());
    torch::Tensor c = torch::zeros({batch, hidden}, x.options());
    std::vector<torch::Tensor> steps(time);
    for (int64_t i = 0; i < time; ++i) {
      int64_t t = reverse ? time - 1 - i : i;
      // h is zero at padded steps (the packed output's padding); the backward direction also
      // keeps c at zero there, so each item starts from a zero state at its last position.
      std::tie(h, c) =
          lstm_cell_pointwise(recurrent_linear(recurrent, input_gates[t], h), c, masks[t]);
      if (reverse) c = c * masks[t];
      steps[t] = h;
    }
    outputs.push_back(torch::stack(steps, 1));
  }
  return torch::cat(outputs, 2);
}

torch::Tensor bidirectional_gru(torch::nn::GRU& gru, const torch::Tensor& x_in,
                                const torch::Tensor& lengths, RnnPadding padding) {
  TTS_CHECK(gru->options.bidirectional() && gru->options.num_layers() == 1 &&
                gru->options.batch_first() && gru->options.bias(),
            "bidirectional_gru: expected a one-layer, bidirectional, batch-first GRU with biases");
  if (padding == RnnPadding::kPacked) return run_packed(gru, x_in, lengths);
  detail::NoAutocast no_autocast;
  const torch::Tensor x = detail::at_least_float(x_in);
  auto params = gru->named_parameters(/*recurse=*/false);
  const int64_t batch = x.size(0), time = x.size(1), hidden = gru->options.hidden_size();
  const std::vector<torch::Tensor> masks = step_masks(x, lengths, hidden);
  std::vector<torch::Tensor> outputs;
  for (bool reverse : {false, true}) {
    const std::string suffix = reverse ? "_l0_reverse" : "_l0";
    // Input projections with their bias for all steps at once: T of [B, 3H] (r, z, n).
    const std::vector<torch::Tensor> input_gates =
        input_projections(x, params["weight_ih" + suffix], params["bias_ih" + suffix]);
    const torch::Tensor weight_hh_t = params["weight_hh" + suffix].t();
    const torch::Tensor& bias_hh = params["bias_hh" + suffix];
    torch::Tensor h = torch::zeros({batch, hidden}, x.options());
    std::vector<torch::Tensor> steps(time);
    for (int64_t i = 0; i < time; ++i) {
      const int64_t t = reverse ? time - 1 - i : i;
      const torch::Tensor recurrent = torch::addmm(bias_hh, h, weight_hh_t);  // [B, 3H]
      const torch::Tensor& in = input_gates[t];
      const torch::Tensor reset_update =
          torch::sigmoid(in.narrow(1, 0, 2 * hidden) + recurrent.narrow(1, 0, 2 * hidden));
      const torch::Tensor reset = reset_update.narrow(1, 0, hidden);
      const torch::Tensor update = reset_update.narrow(1, hidden, hidden);
      const torch::Tensor candidate = torch::tanh(torch::addcmul(
          in.narrow(1, 2 * hidden, hidden), reset, recurrent.narrow(1, 2 * hidden, hidden)));
      // h' = (1 - z) n + z h, zero at padded steps: the output there, and the zero state the
      // backward direction starts each item from at its last position.
      h = torch::addcmul(candidate, update, h - candidate) * masks[t];
      steps[t] = h;
    }
    outputs.push_back(torch::stack(steps, 1));
  }
  return torch::cat(outputs, 2);
}

LSTMCellImpl::LSTMCellImpl(int64_t input_size, int64_t hidden_size) {
  double bound = 1.0 / std::sqrt(static_cast<double>(hidden_size));
  auto uniform = [bound](std::vector<int64_t> shape) {
    return torch::empty(shape).uniform_(-bound, bound);
  };
  weight_ih = register_parameter("weight_ih", uniform({4 * hidden_size, input_size}));
  weight_hh = register_parameter("weight_hh", uniform({4 * hidden_size, hidden_size}));
  bias_ih = register_parameter("bias_ih", uniform({4 * hidden_size}));
  bias_hh = register_parameter("bias_hh", uniform({4 * hidden_size}));
}

}  // namespace tts::tacotron2
