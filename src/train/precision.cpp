#include "tts/train/precision.h"

#include <ATen/Context.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <limits>

#include "tts/core/error.h"
#include "tts/train/autocast_compat.h"

#ifdef TTS_WITH_CUDA
#include <torch/cuda.h>
#endif

namespace tts::train {

void apply_tf32(bool tf32) {
  at::globalContext().setAllowTF32CuBLAS(tf32);
  at::globalContext().setAllowTF32CuDNN(tf32);
}

void check_precision(config::Precision precision, const torch::Device& device) {
  if (precision == config::Precision::kFp32) return;
  std::string found;
  try {
    AutocastScope autocast(device, precision);
    torch::Tensor x = torch::ones({2, 2}, torch::TensorOptions().device(device));
    torch::Tensor y = torch::nn::functional::linear(x, x);
    if (y.scalar_type() == at::kBFloat16) return;
    found = fmt::format("a matrix product under autocast gave {}", c10::toString(y.scalar_type()));
  } catch (const std::exception& e) {
    found = fmt::format("a matrix product under autocast failed: {}", e.what());
  }
  throw UsageError(
      fmt::format("train.precision = bf16: libtorch {} cannot run bf16 autocast on {} ({}); use "
                  "train.precision: fp32",
                  TORCH_VERSION, device.str(), found));
}

AutocastScope::AutocastScope(const torch::Device& device, config::Precision precision) {
  if (precision != config::Precision::kBf16) return;
  type_ = device.type();
  was_enabled_ = compat::autocast_enabled(type_);
  previous_dtype_ = compat::autocast_dtype(type_);
  compat::set_autocast_dtype(type_, at::kBFloat16);
  compat::set_autocast_enabled(type_, true);
  at::autocast::increment_nesting();
  active_ = true;
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  compat::set_autocast_enabled(type_, was_enabled_);
  compat::set_autocast_dtype(type_, previous_dtype_);
}

double measure_gemm_gflops(const torch::Device& device, torch::ScalarType dtype, int64_t size) {
  auto options = torch::TensorOptions().device(device).dtype(dtype);
  torch::Tensor a = torch::randn({size, size}, options);
  torch::Tensor b = torch::randn({size, size}, options);
  auto synchronize = [&] {
#ifdef TTS_WITH_CUDA
    if (device.is_cuda()) torch::cuda::synchronize(device.index());
#endif
  };
  torch::Tensor c = torch::mm(a, b);  // the BLAS's own set-up
  synchronize();
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 5; ++i) {
    auto start = std::chrono::steady_clock::now();
    c = torch::mm(a, b);
    synchronize();
    best = std::min(
        best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  const double n = static_cast<double>(size);
  return 2 * n * n * n / best / 1e9;
}

}  // namespace tts::train
