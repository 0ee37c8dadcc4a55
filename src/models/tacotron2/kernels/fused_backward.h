// Shared by the model's custom autograd nodes whose backward is a hand-written kernel
// (recurrent_linear.cpp, attention_score.cpp, lstm_cell.cpp).
#pragma once

#include <torch/torch.h>

namespace tts::tacotron2::detail {

// Their backward is not itself differentiable (like PyTorch's once_differentiable): refuse
// create_graph instead of returning gradients without history.
inline void check_not_double_backward(const char* node) {
  TORCH_CHECK(!torch::GradMode::is_enabled(), node,
              ": double backward (create_graph) is not supported; its backward is a fused "
              "kernel");
}

}  // namespace tts::tacotron2::detail
