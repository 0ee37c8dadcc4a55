// The CPU kernels of the model's own autograd nodes (lstm_cell.cpp, attention_score.cpp,
// step_linear.cpp), callable by another node: the fused decoder step (decoder_step.cpp) runs
// the same arithmetic as the nodes it replaces. All take contiguous float or double CPU tensors.
#pragma once

#include <torch/torch.h>

#include <tuple>
#include <utility>

#include "tts/models/tacotron2/recurrent.h"

namespace tts::tacotron2::detail {

// The LSTM cell's element-wise part: gates [B, 4H] (i, f, g, o pre-activations), cell [B, H],
// mask [B, H] or an empty tensor (no dropout).
struct LstmPointwiseForward {
  torch::Tensor activations;  // [B, 4H]: sigmoid(i), sigmoid(f), tanh(g), sigmoid(o)
  torch::Tensor c, tanh_c;    // [B, H]: the new cell state and its tanh
  torch::Tensor h;            // [B, H]: the output, times the mask
};
LstmPointwiseForward lstm_pointwise_forward_cpu(const torch::Tensor& gates,
                                                const torch::Tensor& cell,
                                                const torch::Tensor& mask);
// -> (gradient of the gates [B, 4H], of the previous cell state [B, H]).
std::pair<torch::Tensor, torch::Tensor> lstm_pointwise_backward_cpu(
    const torch::Tensor& activations, const torch::Tensor& cell, const torch::Tensor& tanh_c,
    const torch::Tensor& mask, const torch::Tensor& grad_h, const torch::Tensor& grad_c);

// The attention's scores and masked softmax: location, processed [B, A, T]; query [B, A]; v [A];
// mask [B, 1, T] bool -> (tanh activations [B, A, T], weights [B, 1, T]).
std::pair<torch::Tensor, torch::Tensor> attention_score_forward_cpu(const torch::Tensor& location,
                                                                    const torch::Tensor& processed,
                                                                    const torch::Tensor& query,
                                                                    const torch::Tensor& v,
                                                                    const torch::Tensor& mask);
// -> (gradient of the tanh's argument [B, A, T] (location's and processed's), of query [B, A],
// of v [A]).
std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> attention_score_backward_cpu(
    const torch::Tensor& activations, const torch::Tensor& weights, const torch::Tensor& v,
    const torch::Tensor& grad_weights);

// One step's share of a StepWeight's gradient: input rows x [B, in], output gradients [B, out].
void add_step_rows(StepGradient& gradient, const torch::Tensor& x, const torch::Tensor& grad);

}  // namespace tts::tacotron2::detail
