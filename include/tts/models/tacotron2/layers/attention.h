// Tacotron-2's location-sensitive attention (NVIDIA/tacotron2's model.py architecture, our own
// code); its scores' CPU node lives in src/models/tacotron2/kernels/attention_score.cpp.
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
#include "tts/models/tacotron2/layers/recurrent.h"

namespace tts::tacotron2 {

// The attention weights of one step: softmax over T_text of v . tanh(location + processed +
// query), -inf where masked. location, processed [B, A, T_text]; query [B, A]; v [1, A] or [A];
// mask [B, 1, T_text] bool (true = padded) -> [B, 1, T_text]. One autograd node on CPU
// (attention_score.cpp), composed torch ops elsewhere.
torch::Tensor attention_weights(const torch::Tensor& location, const torch::Tensor& processed,
                                const torch::Tensor& query, const torch::Tensor& v,
                                const torch::Tensor& mask);

// Location-sensitive attention (Chorowski et al. 2015) with cumulative weights. Parameters as
// NVIDIA's: query_layer, memory_layer, v, location_conv, location_dense (all without bias). The
// location convolution and its dense projection are both linear, so step() applies them as one
// convolution whose weight location_weight() composes once per utterance batch.
class AttentionImpl : public torch::nn::Module {
 public:
  AttentionImpl(int64_t query_dim, int64_t memory_dim, int64_t attention_dim, int64_t n_filters,
                int64_t kernel_size);
  // memory [B, T_text, E] -> processed memory [B, attention_dim, T_text] (computed once).
  torch::Tensor process_memory(const torch::Tensor& memory);
  // location_dense o location_conv as one convolution weight [attention_dim, 2, kernel_size].
  torch::Tensor location_weight();
  // v's weight as a vector [attention_dim], and the location convolution's padding.
  torch::Tensor v_weight() const;
  int64_t location_padding() const { return padding_; }
  // query_layer's weight prepared for step() (once per utterance batch).
  RecurrentWeight query_weight(RecurrentProductPath path);
  // One step. query_weight from query_weight(); query [B, query_dim]; processed [B, A, T_text];
  // memory [B, T_text, E];
  // previous_and_cumulative [B, 2, T_text]; location [A, 2, K]; mask [B, 1, T_text].
  // Returns (context [B, E], weights [B, 1, T_text]).
  std::pair<torch::Tensor, torch::Tensor> step(const RecurrentWeight& query_weight,
                                               const torch::Tensor& query,
                                               const torch::Tensor& processed,
                                               const torch::Tensor& memory,
                                               const torch::Tensor& previous_and_cumulative,
                                               const torch::Tensor& location,
                                               const torch::Tensor& mask);

 private:
  torch::nn::Linear query_layer_{nullptr}, memory_layer_{nullptr}, v_{nullptr};
  torch::nn::Conv1d location_conv_{nullptr};
  torch::nn::Linear location_dense_{nullptr};
  int64_t padding_;
};
TORCH_MODULE(Attention);

}  // namespace tts::tacotron2
