// Differences between the libtorch versions tts-train builds against (1.13, 2.x) that the train
// module meets: how an optimizer keys its per-parameter state.
//
// 1.13: Optimizer::state() maps c10::guts::to_string(param.unsafeGetTensorImpl()) (the pointer
//       printed by an ostream) to the state.
// 2.x:  it maps the TensorImpl pointer itself (void*).
#pragma once

#include <torch/torch.h>

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

}  // namespace tts::checkpoint::compat
