// Every difference between the libtorch versions tts-train builds against (1.13, 2.x) in
// libtorch's optimizers, in one place: how an optimizer keys its per-parameter state (which
// checkpoints read and write) and how it zeroes its gradients (which the trainer's step does).
//
// State keys:
// 1.13: Optimizer::state() maps c10::guts::to_string(param.unsafeGetTensorImpl()) (the pointer
//       printed by an ostream) to the state.
// 2.x:  it maps the TensorImpl pointer itself (void*).
//
// zero_grad: 1.13's Optimizer::zero_grad() zeroes each gradient in place; 2.x's takes
// set_to_none, true by default, and frees them (the next backward allocates new ones).
#pragma once

#include <torch/optim/optimizer.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <sstream>
#include <string>
#include <type_traits>

namespace tts::checkpoint::compat {

// The key of `param`'s entry in `optimizer.state()`, whichever of the two key types it uses.
template <class Optimizer>
auto optimizer_state_key(Optimizer& optimizer, const torch::Tensor& param) {
  using Key = typename std::decay_t<decltype(optimizer.state())>::key_type;
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream key;  // what c10::guts::to_string writes
    key << param.unsafeGetTensorImpl();
    return key.str();
  } else {
    return static_cast<Key>(param.unsafeGetTensorImpl());
  }
}

// Zeroes `optimizer`'s gradients in place on every libtorch, keeping their storage: what a
// replayed CUDA graph writes into (Note [Replaying a training step]) and what the gradient reducer
// copies into, instead of new tensors each step.
inline void zero_grad_in_place(torch::optim::Optimizer& optimizer) {
#if TORCH_VERSION_MAJOR >= 2
  optimizer.zero_grad(/*set_to_none=*/false);
#else
  optimizer.zero_grad();
#endif
}

}  // namespace tts::checkpoint::compat
