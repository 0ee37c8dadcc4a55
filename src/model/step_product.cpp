// step_linear's per-step products on the CPU, by whichever of two ways is faster for the shape:
//  - a small-batch kernel that streams the large operand once with unit stride (the few rows of
//    the other operand stay in cache). Against Debian's reference BLAS (libblas.so.3 from
//    libblas3, a compute-bound loop nest) it made training steps 1.7-1.9x faster;
//  - libtorch's GEMM, i.e. the BLAS libtorch was linked with or loads: OpenBLAS (what
//    `apt install libtorch-dev` brings in through its Recommends) and MKL (PyPI's wheels) pack
//    their operands and run register-blocked AVX2/AVX-512 kernels, 1.4-4.7x faster than the
//    kernel at every decoder shape measured (docs/benchmarks.md, "Training step").
// Which BLAS is behind libtorch is only known at run time (Debian's libblas.so.3 is an
// alternative the administrator switches), so the first product of each shape times both ways
// and the faster one is used for that shape for the rest of the process.
#include "step_product.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <map>
#include <mutex>
#include <tuple>

#include "tts/core/logging.h"
#include "tts/model/layers.h"

namespace tts::model {
namespace {

std::atomic<StepProductPath> configured_path{StepProductPath::kFastest};

// Above this many rows a GEMM's blocking pays off with any BLAS; the kernel is not considered.
constexpr int64_t kMaxKernelRows = 128;

bool kernel_applies(const torch::Tensor& a, const torch::Tensor& b) {
  return a.device().is_cpu() && b.device() == a.device() && a.size(0) <= kMaxKernelRows &&
         a.scalar_type() == b.scalar_type() &&
         (a.scalar_type() == torch::kFloat || a.scalar_type() == torch::kDouble);
}

// out [M, N] += a [M, K] @ b [K, N]; all contiguous.
template <class T>
void accumulate_product(int64_t rows, int64_t n, int64_t k, const T* a, const T* b, T* out) {
  at::parallel_for(0, n, 2048, [&](int64_t begin, int64_t end) {
    for (int64_t l = 0; l < k; ++l) {
      const T* __restrict bl = b + l * n;
      for (int64_t m = 0; m < rows; ++m) {
        T coefficient = a[m * k + l];
        T* __restrict o = out + m * n;
        for (int64_t j = begin; j < end; ++j) o[j] += coefficient * bl[j];
      }
    }
  });
}

torch::Tensor kernel_product(const torch::Tensor& base, const torch::Tensor& a_in,
                             const torch::Tensor& b) {
  torch::Tensor a = a_in.contiguous();
  int64_t rows = a.size(0), k = a.size(1), n = b.size(1);
  torch::Tensor out = base.defined() ? base.expand({rows, n}).clone(at::MemoryFormat::Contiguous)
                                     : torch::zeros({rows, n}, a.options());
  AT_DISPATCH_FLOATING_TYPES(a.scalar_type(), "step_product_kernel", [&] {
    accumulate_product(rows, n, k, a.data_ptr<scalar_t>(), b.data_ptr<scalar_t>(),
                       out.data_ptr<scalar_t>());
  });
  return out;
}

torch::Tensor gemm_product(const torch::Tensor& base, const torch::Tensor& a,
                           const torch::Tensor& b) {
  return base.defined() ? torch::addmm(base, a, b) : torch::mm(a, b);
}

// The fastest of a few runs of `product` (the first may include the BLAS's own set-up).
template <class Product>
double best_seconds(const Product& product) {
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 3; ++i) {
    auto start = std::chrono::steady_clock::now();
    product();
    best = std::min(
        best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

// Whether the kernel beats the GEMM at this shape, dtype and thread count; timed on the first
// product of each, remembered for the process.
bool kernel_is_faster(const torch::Tensor& a, const torch::Tensor& b) {
  using Shape = std::tuple<int, int64_t, int64_t, int64_t, int>;  // dtype, M, K, N, threads
  static std::mutex mutex;
  static std::map<Shape, bool> faster;
  Shape shape{static_cast<int>(a.scalar_type()), a.size(0), a.size(1), b.size(1),
              at::get_num_threads()};
  std::lock_guard<std::mutex> lock(mutex);
  auto known = faster.find(shape);
  if (known != faster.end()) return known->second;
  torch::Tensor ac = a.contiguous();
  double kernel_s = best_seconds([&] { kernel_product({}, ac, b); });
  double gemm_s = best_seconds([&] { gemm_product({}, ac, b); });
  bool result = kernel_s < gemm_s;
  log::get("model")->debug(
      "step products [{}, {}] x [{}, {}] ({} threads): kernel {:.3f} ms, "
      "GEMM {:.3f} ms; using the {}",
      a.size(0), a.size(1), b.size(0), b.size(1), at::get_num_threads(), 1e3 * kernel_s,
      1e3 * gemm_s, result ? "kernel" : "GEMM");
  faster.emplace(shape, result);
  return result;
}

}  // namespace

void set_step_product_path(StepProductPath path) { configured_path = path; }

namespace detail {

torch::Tensor step_product(const torch::Tensor& base, const torch::Tensor& a,
                           const torch::Tensor& b) {
  StepProductPath path = configured_path;
  bool kernel =
      kernel_applies(a, b) && (path == StepProductPath::kKernel ||
                               (path == StepProductPath::kFastest && kernel_is_faster(a, b)));
  return kernel ? kernel_product(base, a, b) : gemm_product(base, a, b);
}

}  // namespace detail
}  // namespace tts::model
