#include "tts/models/tacotron2/layers/attention.h"

#include <torch/torch.h>

#include <cmath>
#include <vector>

#include "layer_init.h"
#include "tts/core/error.h"

namespace tts::tacotron2 {

AttentionImpl::AttentionImpl(int64_t query_dim, int64_t memory_dim, int64_t attention_dim,
                             int64_t n_filters, int64_t kernel_size)
    : padding_(kernel_size / 2) {
  query_layer_ =
      register_module("query_layer", make_linear(query_dim, attention_dim, false, kGainTanh));
  memory_layer_ =
      register_module("memory_layer", make_linear(memory_dim, attention_dim, false, kGainTanh));
  v_ = register_module("v", make_linear(attention_dim, 1, false, kGainLinear));
  location_conv_ =
      register_module("location_conv", make_conv(2, n_filters, kernel_size, false, kGainLinear));
  location_dense_ =
      register_module("location_dense", make_linear(n_filters, attention_dim, false, kGainTanh));
}

torch::Tensor AttentionImpl::process_memory(const torch::Tensor& memory) {
  return memory_layer_(memory).transpose(1, 2).contiguous();
}

torch::Tensor AttentionImpl::location_weight() {
  const torch::Tensor& conv = location_conv_->weight;  // [F, 2, K]
  return torch::mm(location_dense_->weight, conv.reshape({conv.size(0), -1}))
      .view({-1, conv.size(1), conv.size(2)});
}

torch::Tensor AttentionImpl::v_weight() const { return v_->weight.reshape({-1}); }

RecurrentWeight AttentionImpl::query_weight(RecurrentProductPath path) {
  return make_step_weight(path, query_layer_->weight);
}

std::pair<torch::Tensor, torch::Tensor> AttentionImpl::step(
    const RecurrentWeight& query_weight, const torch::Tensor& query, const torch::Tensor& processed,
    const torch::Tensor& memory, const torch::Tensor& previous_and_cumulative,
    const torch::Tensor& location, const torch::Tensor& mask) {
  torch::Tensor processed_query = recurrent_linear(query_weight, {}, query);  // [B, A]
  torch::Tensor location_features =
      torch::conv1d(previous_and_cumulative, location, {}, 1, padding_);  // [B, A, T]
  torch::Tensor weights =
      attention_weights(location_features, processed, processed_query, v_->weight, mask);
  torch::Tensor context = torch::bmm(weights, memory).squeeze(1);
  return {context, weights};
}

}  // namespace tts::tacotron2
