// step_linear's per-step products on the CPU, by whichever of two ways is faster for the shape:
//  - a small-batch kernel that streams the large operand once, without packing it (the few rows
//    of the other operand stay in cache): for float with AVX2 + FMA, tiles of up to 6 rows x 16
//    columns held in registers across blocks of 16 rows of the large operand, which are read
//    along their rows (16 sequential streams the hardware prefetcher follows). At 4 rows it is
//    bandwidth-bound (a 2560 x 4096 weight in ~2.4 ms, ~18 GB/s) where MKL and OpenBLAS spend
//    most of the call packing that weight again (docs/benchmarks.md). With AVX-512, tiles of
//    up to 8 rows x 48 columns, compute-bound at 16 rows and faster there than their GEMMs too.
//    Elsewhere a portable loop nest, which against Debian's reference BLAS made training steps
//    1.7-1.9x faster;
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

#include "tts/core/cpu_features.h"
#include "tts/core/logging.h"
#include "tts/models/tacotron2/layers.h"

namespace tts::tacotron2 {
namespace {

std::atomic<StepKernelIsa> configured_isa{StepKernelIsa::kBest};

// Above this many rows a GEMM's blocking pays off with any BLAS; the kernel is not considered.
constexpr int64_t kMaxKernelRows = 128;

bool kernel_applies(const torch::Tensor& a, const torch::Tensor& b) {
  return a.device().is_cpu() && b.device() == a.device() && a.size(0) <= kMaxKernelRows &&
         a.scalar_type() == b.scalar_type() &&
         (a.scalar_type() == torch::kFloat || a.scalar_type() == torch::kDouble);
}

// out [M, N] += a [M, K] @ b [K, N]; all contiguous. Any floating type, any CPU.
template <class T>
void accumulate_product_portable(int64_t rows, int64_t n, int64_t k, const T* a, const T* b,
                                 T* out) {
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

template <class T>
void accumulate_product(int64_t rows, int64_t n, int64_t k, const T* a, const T* b, T* out) {
  accumulate_product_portable(rows, n, k, a, b, out);
}

#if TTS_X86_KERNELS
// out[R rows, j .. j + 8V) += a[R rows, k0 .. k1) @ b[k0 .. k1, j .. j + 8V): the tile stays in
// R x V registers over the block. a and out start at the tile's first row; lda = K. Every output
// element is the same chain of FMAs over l in order whatever the tile's shape, so the tiles
// change speed, never values.
template <int R, int V>
__attribute__((target("avx2,fma"))) inline void tile_avx2(int64_t n, int64_t lda, int64_t k0,
                                                          int64_t k1, const float* a,
                                                          const float* b, float* out, int64_t j) {
  __m256 acc[R][V];
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) acc[r][v] = _mm256_loadu_ps(out + r * n + j + 8 * v);
  }
  for (int64_t l = k0; l < k1; ++l) {
    const float* bl = b + l * n + j;
    __m256 bv[V];
    for (int v = 0; v < V; ++v) bv[v] = _mm256_loadu_ps(bl + 8 * v);
    for (int r = 0; r < R; ++r) {
      __m256 coefficient = _mm256_broadcast_ss(a + r * lda + l);
      for (int v = 0; v < V; ++v) acc[r][v] = _mm256_fmadd_ps(coefficient, bv[v], acc[r][v]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) _mm256_storeu_ps(out + r * n + j + 8 * v, acc[r][v]);
  }
}

// tile_avx2<R, V> for the number of rows R <= Max known at run time.
template <int Max, int V>
__attribute__((target("avx2,fma"))) inline void tile_rows_avx2(int64_t rows, int64_t n, int64_t lda,
                                                               int64_t k0, int64_t k1,
                                                               const float* a, const float* b,
                                                               float* out, int64_t j) {
  if constexpr (Max >= 1) {
    if (rows == Max) {
      tile_avx2<Max, V>(n, lda, k0, k1, a, b, out, j);
    } else {
      tile_rows_avx2<Max - 1, V>(rows, n, lda, k0, k1, a, b, out, j);
    }
  }
}

// Every row of a's tiles of 8V columns at column j: 6 rows at a time, then the rest.
template <int V>
__attribute__((target("avx2,fma"))) inline void column_tile_avx2(int64_t rows, int64_t n, int64_t k,
                                                                 int64_t k0, int64_t k1,
                                                                 const float* a, const float* b,
                                                                 float* out, int64_t j) {
  int64_t m = 0;
  for (; m + 6 <= rows; m += 6) tile_avx2<6, V>(n, k, k0, k1, a + m * k, b, out + m * n, j);
  tile_rows_avx2<5, V>(rows - m, n, k, k0, k1, a + m * k, b, out + m * n, j);
}

// out [M, N] += a [M, K] @ b [K, N] over the columns [begin, end), all contiguous (see the top).
// Tiles of 6 rows x 16 columns (12 accumulators of the 16 registers: enough independent FMA
// chains to cover the FMA latency; at 16 rows 10-15% faster than 4-row tiles on the larger
// products), then the rows left, then the last columns. 16 columns are one 64-byte line of b a
// row: wider tiles (24) straddle lines and were slower.
__attribute__((target("avx2,fma"))) void accumulate_product_avx2(int64_t rows, int64_t n, int64_t k,
                                                                 const float* a, const float* b,
                                                                 float* out, int64_t begin,
                                                                 int64_t end) {
  constexpr int64_t kBlock = 16;  // rows of b per pass: 8 to 128 measured, 16 best at 4 and 16 rows
  const int64_t vector_end = begin + (end - begin) / 16 * 16;
  for (int64_t k0 = 0; k0 < k; k0 += kBlock) {
    const int64_t k1 = std::min(k, k0 + kBlock);
    for (int64_t j = begin; j < vector_end; j += 16) {
      column_tile_avx2<2>(rows, n, k, k0, k1, a, b, out, j);
    }
  }
  for (int64_t l = 0; l < k; ++l) {  // the last columns, fewer than 16
    for (int64_t m = 0; m < rows; ++m) {
      for (int64_t j = vector_end; j < end; ++j) out[m * n + j] += a[m * k + l] * b[l * n + j];
    }
  }
}

// The same with AVX-512: tiles of up to 8 rows x 48 columns (24 of the 32 registers), then 16
// columns, then the rest. At 16 rows it is compute-bound and about 1.6x MKL's and OpenBLAS's GEMM
// at the decoder's shapes (which pack the weight on every call).
template <int R, int C>
__attribute__((target("avx512f"))) inline void tile_avx512(int64_t n, int64_t lda, int64_t k0,
                                                           int64_t k1, const float* a,
                                                           const float* b, float* out, int64_t j) {
  __m512 acc[R][C];
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) acc[r][c] = _mm512_loadu_ps(out + r * n + j + 16 * c);
  }
  for (int64_t l = k0; l < k1; ++l) {
    const float* bl = b + l * n + j;
    __m512 bv[C];
    for (int c = 0; c < C; ++c) bv[c] = _mm512_loadu_ps(bl + 16 * c);
    for (int r = 0; r < R; ++r) {
      __m512 coefficient = _mm512_set1_ps(a[r * lda + l]);
      for (int c = 0; c < C; ++c) acc[r][c] = _mm512_fmadd_ps(coefficient, bv[c], acc[r][c]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) _mm512_storeu_ps(out + r * n + j + 16 * c, acc[r][c]);
  }
}

// tile_avx512<R, C> for the number of rows R <= Max known at run time.
template <int C, int Max>
__attribute__((target("avx512f"))) inline void tile_rows_avx512(int64_t rows, int64_t n,
                                                                int64_t lda, int64_t k0, int64_t k1,
                                                                const float* a, const float* b,
                                                                float* out, int64_t j) {
  if constexpr (Max >= 1) {
    if (rows == Max) {
      tile_avx512<Max, C>(n, lda, k0, k1, a, b, out, j);
    } else {
      tile_rows_avx512<C, Max - 1>(rows, n, lda, k0, k1, a, b, out, j);
    }
  }
}

// Every row of one column tile of 16 C columns, over the block k0 .. k1.
template <int C>
__attribute__((target("avx512f"))) void column_tile_avx512(int64_t rows, int64_t n, int64_t k,
                                                           int64_t k0, int64_t k1, const float* a,
                                                           const float* b, float* out, int64_t j) {
  int64_t m = 0;
  for (; m + 8 <= rows; m += 8) tile_avx512<8, C>(n, k, k0, k1, a + m * k, b, out + m * n, j);
  tile_rows_avx512<C, 7>(rows - m, n, k, k0, k1, a + m * k, b, out + m * n, j);
}

__attribute__((target("avx512f"))) void accumulate_product_avx512(int64_t rows, int64_t n,
                                                                  int64_t k, const float* a,
                                                                  const float* b, float* out,
                                                                  int64_t begin, int64_t end) {
  constexpr int64_t kBlock = 16;
  const int64_t wide_end = begin + (end - begin) / 48 * 48;
  const int64_t vector_end = wide_end + (end - wide_end) / 16 * 16;
  for (int64_t k0 = 0; k0 < k; k0 += kBlock) {
    const int64_t k1 = std::min(k, k0 + kBlock);
    for (int64_t j = begin; j < wide_end; j += 48) {
      column_tile_avx512<3>(rows, n, k, k0, k1, a, b, out, j);
    }
    for (int64_t j = wide_end; j < vector_end; j += 16) {
      column_tile_avx512<1>(rows, n, k, k0, k1, a, b, out, j);
    }
  }
  for (int64_t l = 0; l < k; ++l) {  // the last columns, fewer than 16
    for (int64_t m = 0; m < rows; ++m) {
      for (int64_t j = vector_end; j < end; ++j) out[m * n + j] += a[m * k + l] * b[l * n + j];
    }
  }
}

template <>
void accumulate_product<float>(int64_t rows, int64_t n, int64_t k, const float* a, const float* b,
                               float* out) {
  const StepKernelIsa isa = configured_isa;
  if (isa == StepKernelIsa::kBest && cpu::has_avx512f()) {
    at::parallel_for(0, n, 2048, [&](int64_t begin, int64_t end) {
      accumulate_product_avx512(rows, n, k, a, b, out, begin, end);
    });
  } else if (isa != StepKernelIsa::kPortable && cpu::has_avx2_fma()) {
    at::parallel_for(0, n, 2048, [&](int64_t begin, int64_t end) {
      accumulate_product_avx2(rows, n, k, a, b, out, begin, end);
    });
  } else {
    accumulate_product_portable(rows, n, k, a, b, out);
  }
}

#endif  // TTS_X86_KERNELS

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

void set_step_kernel_isa(StepKernelIsa isa) { configured_isa = isa; }

namespace detail {

torch::Tensor step_product(const torch::Tensor& base, const torch::Tensor& a,
                           const torch::Tensor& b, StepProductPath path) {
  bool kernel =
      kernel_applies(a, b) && (path == StepProductPath::kKernel ||
                               (path == StepProductPath::kFastest && kernel_is_faster(a, b)));
  return kernel ? kernel_product(base, a, b) : gemm_product(base, a, b);
}

}  // namespace detail
}  // namespace tts::tacotron2
