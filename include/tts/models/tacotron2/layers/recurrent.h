// Tacotron-2's recurrent machinery: padding masks, the weights every recurrent step multiplies
// with (RecurrentWeight, recurrent_linear: src/models/tacotron2/kernels/recurrent_linear.cpp), the
// LSTM cell's parameters and its element-wise node, and the bidirectional LSTM written with them.
// Layout conventions (every part of the network): batch first; time before channels for
// sequences ([B, T, C]) except inside convolutions. Lengths are int64 [B]. Masks are bool, true at
// padded positions.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/rnn.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include <utility>
#include <vector>

#include "tts/config/train_options.h"
#include "tts/models/family_sections.h"
#include "tts/models/tacotron2/options.h"

namespace tts::tacotron2 {

// [B, T] bool, true where position >= length. `lengths` int64 [B].
torch::Tensor padding_mask(const torch::Tensor& lengths, int64_t max_length);

// The weight gradient of a RecurrentWeight, summed over the steps of an utterance batch: the steps'
// backward buffer their input rows and output gradients, and every kGradientRows rows become one
// matrix product added to `sum` (recurrent_linear.cpp). Tensors shared by the steps' autograd
// nodes; all undefined when no gradient is needed.
struct StepGradient {
  torch::Tensor sum;     // [in, out]
  torch::Tensor inputs;  // [kGradientRows, in] buffered input rows
  torch::Tensor grads;   // [kGradientRows, out] their output gradients
  torch::Tensor rows;    // int64 [1] on the CPU: rows buffered
  bool defined() const { return sum.defined(); }
};
// Rows buffered per weight-gradient product: enough for a BLAS GEMM to run near its peak, few
// enough that the buffers stay small (a few MB for the full-size decoder cells).
constexpr int64_t kGradientRows = 512;

// How recurrent_linear computes its per-step products on the CPU (model.recurrent_products): always
// by its small-batch kernel where it applies, always by libtorch's GEMM, or by the faster of the
// two (whose speed depends on the BLAS behind it), measured on the first product of each shape in
// the process. The model carries it (Tacotron2Impl::set_recurrent_products, from its config) down
// to every weight it prepares: no process-wide setting.
using RecurrentProductPath = config::RecurrentProducts;

// A weight that every recurrent step multiplies with (see recurrent_linear.cpp), prepared once per
// utterance batch from its parameters `first` [out, in_0] and optionally `second` [out, in_1]
// (concatenated along the input dimension); its products run by `path`.
struct RecurrentWeight {
  torch::Tensor weight;    // [out, in] contiguous, no autograd history
  torch::Tensor weight_t;  // [in, out] contiguous; its autograd node delivers the gradient
  // weight and weight_t in the CPU kernel's panels (recurrent_product.cpp), or undefined: the same
  // values, read by the backward and the forward products.
  torch::Tensor panels;
  torch::Tensor panels_t;
  StepGradient gradient;
  RecurrentProductPath path = RecurrentProductPath::kGemm;
};
RecurrentWeight make_step_weight(RecurrentProductPath path, const torch::Tensor& first,
                                 const torch::Tensor& second = {});

// base + x @ weight.t() for x [B, in] and base [B, out], [out] or undefined (nothing added), with
// the gradients of torch::addmm (checked against it by the tests).
torch::Tensor recurrent_linear(const RecurrentWeight& weight, const torch::Tensor& base,
                               const torch::Tensor& x);

// The widest vector instructions the float kernel may use: the best the CPU has (AVX-512, else
// AVX2 + FMA, else portable C++; the default), or at most AVX2, or none (tests run each path).
enum class StepKernelIsa { kBest, kAvx2, kPortable };
void set_step_kernel_isa(StepKernelIsa isa);

// How a bidirectional RNN over a padded batch (the encoder's LSTM, the CBHG's GRU) keeps the
// padding out: both give the result of packed sequences (zero outputs at padded positions, the
// backward direction starting at each item's last position).
enum class RnnPadding {
  // libtorch's RNN over pack_padded_sequence: cuDNN's fused kernels on CUDA. Reads the lengths
  // on the host, so a CUDA graph can neither capture it nor repeat it for another batch.
  kPacked,
  // Step by step over the whole padded length, the padded steps masked on the device: no host
  // read, the same work for every batch of a shape (what a captured graph replays).
  kMasked,
};
// The padding of each of the model's bidirectional RNNs.
struct RecurrencePaths {
  RnnPadding lstm = RnnPadding::kMasked;
  RnnPadding gru = RnnPadding::kPacked;
};
// Decided once per model, from where it runs: on CUDA packed (cuDNN), unless the run replays CUDA
// graphs (train.cuda_graphs), which needs both masked; on the CPU the LSTM masked (its per-step
// products run our small-batch kernels, faster than libtorch's packed LSTM) and the GRU packed.
RecurrencePaths recurrence_paths(const torch::Device& device, bool cuda_graphs);

// torch::nn::LSTM `lstm` (one layer, bidirectional, batch first) over x [B, T, I] with lengths
// [B], as over packed sequences: [B, T, 2H], zero at padded positions, the backward direction
// starting at each item's last position. kMasked: written with recurrent_linear and
// lstm_cell_pointwise (one input projection for all steps, small-batch kernels per step), on
// `lstm`'s parameters; kPacked: libtorch's LSTM over the packed batch.
torch::Tensor bidirectional_lstm(torch::nn::LSTM& lstm, const torch::Tensor& x,
                                 const torch::Tensor& lengths, RecurrentProductPath path,
                                 RnnPadding padding);

// torch::nn::GRU `gru` (one layer, bidirectional, batch first) over x [B, T, I] with lengths
// [B], as over packed sequences: [B, T, 2H] in fp32 at least, autocast off (the state runs over
// every step), zero at padded positions. kMasked: one input projection for all steps, then per
// step the recurrent product and the gates (r, z, n, as torch::nn::GRU) in libtorch's operators;
// kPacked: libtorch's GRU over the packed batch.
torch::Tensor bidirectional_gru(torch::nn::GRU& gru, const torch::Tensor& x,
                                const torch::Tensor& lengths, RnnPadding padding);

// The parameters of an LSTM cell, laid out as torch::nn::LSTMCell's (weight_ih [4H, I],
// weight_hh [4H, H], bias_ih, bias_hh; gates i, f, g, o), applied by hand so that input
// projections that do not depend on the step can be computed for all steps at once.
class LSTMCellImpl : public torch::nn::Module {
 public:
  LSTMCellImpl(int64_t input_size, int64_t hidden_size);
  torch::Tensor weight_ih, weight_hh, bias_ih, bias_hh;
};
TORCH_MODULE(LSTMCell);

// The element-wise part of an LSTM cell as one autograd node: gates [B, 4H] (pre-activations
// i, f, g, o, as torch::nn::LSTMCell), cell [B, H], dropout_mask [B, H] (scaled 0 or 1/(1-p))
// or undefined -> (h [B, H] multiplied by the mask, c [B, H]).
std::pair<torch::Tensor, torch::Tensor> lstm_cell_pointwise(const torch::Tensor& gates,
                                                            const torch::Tensor& cell,
                                                            const torch::Tensor& dropout_mask);

}  // namespace tts::tacotron2
