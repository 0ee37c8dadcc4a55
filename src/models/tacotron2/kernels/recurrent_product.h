// The per-step products of recurrent_linear.cpp: base + a [M, K] @ b [K, N] for a few rows (the
// batch) and a large, contiguous b (a weight every recurrent step multiplies with).
#pragma once

#include <torch/torch.h>

#include "tts/models/tacotron2/options.h"

namespace tts::tacotron2::detail {

// base (undefined, [N] or [M, N]) + a @ b; b contiguous. On the CPU by the way `path` says (see
// recurrent_product.cpp and model.recurrent_products), elsewhere by libtorch's GEMM. `panels`,
// where defined, is kernel_panels(b, path): the kernel reads them instead of b, to the same values.
torch::Tensor recurrent_product(const torch::Tensor& base, const torch::Tensor& a,
                                const torch::Tensor& b, config::RecurrentProducts path,
                                const torch::Tensor& panels = {});

// b [K, N] laid out for the CPU kernel: [N / 16, K, 16], each 16 columns' values row by row, so
// that a tile reads one sequential stream. Undefined where the kernel would not read them (not
// a float CPU tensor, no AVX2, fewer than 16 columns, or `path` is kGemm). Made once per batch
// for a weight every step multiplies with (make_step_weight).
torch::Tensor kernel_panels(const torch::Tensor& b, config::RecurrentProducts path);

}  // namespace tts::tacotron2::detail
