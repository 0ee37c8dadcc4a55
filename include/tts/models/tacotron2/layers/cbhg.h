// The optional CBHG linear head of Tacotron-2 (Rayhane-mamah/Tacotron-2's architecture, our own
// code).
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
#include "tts/models/tacotron2/layers/batch_context.h"
#include "tts/models/tacotron2/layers/recurrent.h"

namespace tts::tacotron2 {

// CBHG (Lee et al. 2017) as Rayhane's post-processing network: a bank of Conv1d+BatchNorm+ReLU
// with kernels 1..cbhg_kernels, max-pooling (2, stride 1), two projection convolutions (kernel 3)
// back to the input size, a residual connection, a dense layer to cbhg_rnn_units, highway layers
// of that size, a BiGRU of cbhg_rnn_units per direction, and a dense layer to n_linear.
class CBHGImpl : public torch::nn::Module {
 public:
  CBHGImpl(const config::ModelOptions& options, int64_t in_dim, int64_t out_dim);
  // x [B, T, in_dim], lengths [B] -> [B, T, out_dim], zero at padded frames.
  // `context`: global BatchNorm in training.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& lengths,
                        const BatchContext& context = {});
  void set_gru_padding(RnnPadding padding) { gru_padding_ = padding; }

 private:
  RnnPadding gru_padding_ = RecurrencePaths{}.gru;
  std::vector<torch::nn::Conv1d> bank_;
  std::vector<torch::nn::BatchNorm1d> bank_norms_;
  torch::nn::Conv1d projection0_{nullptr}, projection1_{nullptr};
  torch::nn::BatchNorm1d projection0_norm_{nullptr}, projection1_norm_{nullptr};
  torch::nn::Linear highway_input_{nullptr};
  std::vector<std::pair<torch::nn::Linear, torch::nn::Linear>> highways_;  // (H, T)
  torch::nn::GRU gru_{nullptr};
  torch::nn::Linear output_{nullptr};
};
TORCH_MODULE(CBHG);

}  // namespace tts::tacotron2
