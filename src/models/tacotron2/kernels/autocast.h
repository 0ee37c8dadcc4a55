// How the model's own autograd nodes (recurrent_linear.cpp, lstm_cell.cpp, attention_score.cpp)
// meet autocast (train.precision = bf16, precision.h). Autocast recasts the inputs of the ops on
// its lists (matrix products, convolutions) and knows nothing of our nodes, so each node chooses
// its dtypes itself, as PyTorch's custom_fwd does, and runs its inside with autocast off:
//  - recurrent_linear computes its products in the dtype of its RecurrentWeight, made in autocast's
//  dtype
//    when autocast is on (as a torch::linear would), and sums the weight gradient in fp32;
//  - the LSTM cell's element-wise part and the attention's scores and softmax compute in fp32
//    (at_least_float): the cell state and the attention weights accumulate over hundreds of steps.
#pragma once

#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/torch.h>

#include <optional>

#include "tts/train/autocast_compat.h"

namespace tts::tacotron2::detail {

// The dtype of autocast's lower-precision ops on `device` now, or none when autocast is off.
inline std::optional<at::ScalarType> autocast_dtype(const torch::Device& device) {
  if (!train::compat::autocast_enabled(device.type())) return std::nullopt;
  return train::compat::autocast_dtype(device.type());
}

// t in fp32 when it holds a reduced-precision float (bf16, fp16); anything else as it is
// (differentiable: the gradient goes back in t's dtype).
inline torch::Tensor at_least_float(const torch::Tensor& t) {
  if (!t.defined()) return t;
  at::ScalarType type = t.scalar_type();
  return type == at::kBFloat16 || type == at::kHalf ? t.to(at::kFloat) : t;
}

// t in `dtype`: t itself when it is already (no operator call: the decoder calls this per step,
// where a no-op conversion still pays the dispatcher).
inline torch::Tensor as_type(const torch::Tensor& t, at::ScalarType dtype) {
  return !t.defined() || t.scalar_type() == dtype ? t : t.to(dtype);
}

// While it lives, ops run in the dtypes of their inputs: autocast's dispatch keys are excluded.
class NoAutocast {
 public:
  NoAutocast() : guard_(c10::autocast_dispatch_keyset) {}

 private:
  c10::impl::ExcludeDispatchKeyGuard guard_;
};

}  // namespace tts::tacotron2::detail
