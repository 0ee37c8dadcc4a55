// The CPU kernels of the model's own autograd nodes (lstm_cell.cpp, attention_score.cpp,
// recurrent_linear.cpp), callable by another node: the fused decoder step (decoder_step.cpp) runs
// the same arithmetic as the nodes it replaces. All take contiguous float or double CPU tensors.
// And the fused step's kernels by device (StepKernels): these on the CPU, CUDA's on a GPU.
#pragma once

#include <torch/torch.h>

#include <tuple>
#include <utility>

#include "tts/models/tacotron2/layers/recurrent.h"

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

// One step's share of a RecurrentWeight's gradient: input rows x [B, in], output gradients [B,
// out].
void add_step_rows(StepGradient& gradient, const torch::Tensor& x, const torch::Tensor& grad);

// The fused decoder step's attention forward: the scores and softmax as
// attention_score_forward_cpu, and the cumulative weights carried on.
struct AttentionStepForward {
  torch::Tensor activations;     // [B, A, T]: the tanh
  torch::Tensor weights;         // [B, 1, T]
  torch::Tensor new_cumulative;  // [B, 2, T]: these weights, the cumulative ones plus them
};

// The fused decoder step's kernels on one device (decoder_step.cpp): the CPU's (the kernels
// above) or CUDA's (fused_kernels_cuda.cpp, decoder_step_kernels.cu). Every tensor contiguous,
// of one floating dtype.
struct StepKernels {
  // As lstm_pointwise_forward_cpu and lstm_pointwise_backward_cpu.
  LstmPointwiseForward (*lstm_forward)(const torch::Tensor& gates, const torch::Tensor& cell,
                                       const torch::Tensor& mask);
  std::pair<torch::Tensor, torch::Tensor> (*lstm_backward)(
      const torch::Tensor& activations, const torch::Tensor& cell, const torch::Tensor& tanh_c,
      const torch::Tensor& mask, const torch::Tensor& grad_h, const torch::Tensor& grad_c);
  // location features, processed memory [B, A, T]; query [B, A]; v [A]; mask [B, 1, T] bool;
  // weights_and_cumulative [B, 2, T].
  AttentionStepForward (*attention_forward)(const torch::Tensor& location,
                                            const torch::Tensor& processed,
                                            const torch::Tensor& query, const torch::Tensor& v,
                                            const torch::Tensor& mask,
                                            const torch::Tensor& weights_and_cumulative);
  // The weights' gradient is grad_weights [B, 1, T] (the context product's) plus both rows of
  // grad_cumulative [B, 2, T] and grad_weights_out [B, 1, T] (either may be undefined) -> as
  // attention_score_backward_cpu. grad_weights is the caller's to give up: a kernel may sum
  // into it in place (the CPU's does), so it must not be read afterwards or alias a tensor that
  // is.
  std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> (*attention_backward)(
      const torch::Tensor& activations, const torch::Tensor& weights, const torch::Tensor& v,
      const torch::Tensor& grad_weights, const torch::Tensor& grad_cumulative,
      const torch::Tensor& grad_weights_out);
};

// The kernels for `device`, or nullptr where the fused step has none (a device other than the
// CPU and, in a build with CUDA, a CUDA device).
const StepKernels* step_kernels(const torch::Device& device);

#ifdef TTS_WITH_CUDA
const StepKernels& cuda_step_kernels();  // fused_kernels_cuda.cpp
#endif

}  // namespace tts::tacotron2::detail
