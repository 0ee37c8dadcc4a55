#include "tts/models/tacotron2/recurrent.h"

#include <torch/torch.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "layer_init.h"
#include "tts/core/error.h"

namespace tts::tacotron2 {

torch::Tensor padding_mask(const torch::Tensor& lengths, int64_t max_length) {
  auto positions = torch::arange(max_length, lengths.options().dtype(torch::kInt64));
  return positions.unsqueeze(0) >= lengths.to(torch::kInt64).unsqueeze(1);
}

// ---------------------------------------------------------------------------------------------

torch::Tensor bidirectional_lstm(torch::nn::LSTM& lstm, const torch::Tensor& x,
                                 const torch::Tensor& lengths, StepProductPath path) {
  TTS_CHECK(lstm->options.bidirectional() && lstm->options.num_layers() == 1 &&
                lstm->options.batch_first() && lstm->options.bias() &&
                lstm->options.proj_size() == 0,
            "bidirectional_lstm: expected a one-layer, bidirectional, batch-first LSTM with biases "
            "and no projection");
  // On CUDA, cuDNN's bidirectional LSTM over the packed batch (the same result: each item's
  // backward direction starts at its last position, padding outputs are zero) instead of ~2 x T
  // steps of small kernels.
  if (x.is_cuda()) return run_packed(lstm, x, lengths);
  auto params = lstm->named_parameters(/*recurse=*/false);
  int64_t batch = x.size(0), time = x.size(1), hidden = lstm->options.hidden_size();
  torch::Tensor valid = torch::arange(time, x.options().dtype(torch::kInt64))
                            .unsqueeze(0)
                            .lt(lengths.to(x.device(), torch::kInt64).unsqueeze(1))
                            .to(x.dtype());  // [B, T]
  std::vector<torch::Tensor> masks =
      valid.t().unsqueeze(2).expand({time, batch, hidden}).contiguous().unbind(0);
  std::vector<torch::Tensor> outputs;
  for (bool reverse : {false, true}) {
    std::string suffix = reverse ? "_l0_reverse" : "_l0";
    const torch::Tensor& weight_ih = params["weight_ih" + suffix];
    // Input projections and both biases for all steps at once: [T, B, 4H].
    std::vector<torch::Tensor> input_gates =
        torch::addmm(params["bias_ih" + suffix] + params["bias_hh" + suffix],
                     x.reshape({batch * time, -1}), weight_ih.t())
            .view({batch, time, 4 * hidden})
            .transpose(0, 1)
            .contiguous()
            .unbind(0);
    StepWeight recurrent = make_step_weight(path, params["weight_hh" + suffix]);
    torch::Tensor h = torch::zeros({batch, hidden}, x.options());
    torch::Tensor c = torch::zeros({batch, hidden}, x.options());
    std::vector<torch::Tensor> steps(time);
    for (int64_t i = 0; i < time; ++i) {
      int64_t t = reverse ? time - 1 - i : i;
      // h is zero at padded steps (the packed output's padding); the backward direction also
      // keeps c at zero there, so each item starts from a zero state at its last position.
      std::tie(h, c) = lstm_cell_pointwise(step_linear(recurrent, input_gates[t], h), c, masks[t]);
      if (reverse) c = c * masks[t];
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
