// The per-step products of step_linear.cpp: base + a [M, K] @ b [K, N] for a few rows (the
// batch) and a large, contiguous b (a weight every recurrent step multiplies with).
#pragma once

#include <torch/torch.h>

#include "tts/config/train_options.h"

namespace tts::tacotron2::detail {

// base (undefined, [N] or [M, N]) + a @ b; b contiguous. On the CPU by the way `path` says (see
// step_product.cpp and train.step_products), elsewhere by libtorch's GEMM.
torch::Tensor step_product(const torch::Tensor& base, const torch::Tensor& a,
                           const torch::Tensor& b, config::StepProducts path);

}  // namespace tts::tacotron2::detail
