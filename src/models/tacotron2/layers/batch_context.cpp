#include "tts/models/tacotron2/layers/batch_context.h"

#include <torch/torch.h>

#include "layer_init.h"
#include "tts/models/global_batch_norm.h"

namespace tts::tacotron2 {

torch::Tensor channels_first_dropout(const torch::Tensor& x, double p, bool training,
                                     uint64_t layer, const torch::Tensor& lengths,
                                     const BatchContext& context) {
  if (!training || p == 0) return x;
  if (!context.keyed()) return maybe_dropout(x, p, true);
  return x * context.dropout->mask(layer, p, x.size(2), x.size(1), lengths, x.options())
                 .transpose(1, 2);
}

torch::Tensor batch_norm(torch::nn::BatchNorm1dImpl& norm, const torch::Tensor& y,
                         const torch::Tensor& valid, const BatchContext& context) {
  if (context.batch_norm == nullptr) return norm.forward(y);
  return models::global_batch_norm(norm, y, valid, *context.batch_norm);
}

torch::Tensor conv_batch_norm(torch::nn::Conv1dImpl& conv, torch::nn::BatchNorm1dImpl& norm,
                              const torch::Tensor& x, const torch::Tensor& valid,
                              const BatchContext& context, int64_t frames) {
  auto cut = [&](const torch::Tensor& y) { return frames >= 0 ? y.narrow(2, 0, frames) : y; };
  if (context.batch_norm == nullptr || !norm.is_training()) {
    return norm.forward(cut(conv.forward(x)));
  }
  const auto& o = conv.options;
  torch::Tensor y = F::conv1d(x, conv.weight,
                              F::Conv1dFuncOptions()
                                  .stride(o.stride())
                                  .padding(o.padding())
                                  .dilation(o.dilation())
                                  .groups(o.groups()));
  return models::global_batch_norm(norm, cut(y), valid, *context.batch_norm,
                                   o.bias() ? conv.bias : torch::Tensor());
}

torch::Tensor step_major_mask(double p, uint64_t layer, int64_t steps, int64_t C,
                              const torch::Tensor& row_steps, const BatchContext& context,
                              const torch::TensorOptions& options) {
  if (p == 0) return {};
  return context.dropout->mask(layer, p, steps, C, row_steps, options).transpose(0, 1);
}

}  // namespace tts::tacotron2
