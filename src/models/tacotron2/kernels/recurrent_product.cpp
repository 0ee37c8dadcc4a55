// recurrent_linear's per-step products on the CPU, by whichever of two ways is faster for the
// shape:
//  - a small-batch kernel that streams the large operand once (the few rows of the other operand
//    stay in cache): for float with AVX2 + FMA, tiles of up to 6 rows x 16 columns held in
//    registers; with AVX-512, tiles of up to 8 rows x 48 columns. It reads the operand in
//    panels of 16 columns (kernel_panels: made once per batch for a weight every step multiplies
//    with, so each tile reads one sequential stream), or, where there are none, along the
//    operand's rows in blocks of 16. At 4 rows it is bandwidth-bound, where MKL and OpenBLAS
//    spend most of the call packing the weight again; at 16 rows with AVX-512 it is
//    compute-bound and faster than their GEMMs too (docs/benchmarks.md). Elsewhere a portable
//    loop nest, which against Debian's reference BLAS made training steps 1.7-1.9x faster;
//  - libtorch's GEMM, i.e. the BLAS libtorch was linked with or loads: OpenBLAS (what
//    `apt install libtorch-dev` brings in through its Recommends) and MKL (PyPI's wheels) pack
//    their operands and run register-blocked AVX2/AVX-512 kernels.
// Which way runs is model.recurrent_products: the kernel wherever it applies (the default), the
// GEMM, or (`fastest`) the faster of the two for each shape, timed on its first product in the
// process (which BLAS is behind libtorch is only known at run time: Debian's libblas.so.3 is an
// alternative the administrator switches).
#include "recurrent_product.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "tts/core/cpu_features.h"
#include "tts/core/error.h"
#include "tts/core/logging.h"
#include "tts/models/tacotron2/layers/layers.h"

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

// Columns are handed out to threads in groups of 16 (one tile's width), so which columns a
// thread's vector tiles cover, and the last n % 16 that the scalar loop does, never depend on the
// thread count: a product rounds alike on any number of threads.
constexpr int64_t kGroup = 16;

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
void accumulate_product(int64_t rows, int64_t n, int64_t k, const T* a, const T* b, const T*,
                        T* out) {
  accumulate_product_portable(rows, n, k, a, b, out);
}

#if TTS_X86_KERNELS
// Where a tile reads b: the 16 columns of group c (counted from the tile's first) at row l are
// at base + c * group_stride + l * ldb. For b itself: base = b + j, ldb = N, group_stride = 16;
// for its panels (kernel_panels): base = the tile's first panel, ldb = 16, group_stride = 16 K.
struct TileOperand {
  const float* base;
  int64_t ldb;
  int64_t group_stride;
};

// The operand of the tile at column j (a multiple of 16).
TileOperand operand_at(const float* b, const float* panels, int64_t n, int64_t k, int64_t j) {
  if (panels != nullptr) return {panels + j * k, kGroup, kGroup * k};
  return {b + j, n, kGroup};
}

// out[R rows, j .. j + 16) += a[R rows, k0 .. k1) @ b[k0 .. k1, j .. j + 16): the tile stays in
// 2R registers over the block. a and out start at the tile's first row; lda = K. Every output
// element is the same chain of FMAs over l in order whatever the tile's shape, block or
// operand layout, so those change speed, never values.
// (`#pragma GCC unroll` on every loop over the tile: without it GCC 12 keeps the accumulators
// in a stack array and stores all of them on every l, which halved the AVX2 tile's speed.)
template <int R>
__attribute__((target("avx2,fma"))) inline void tile_avx2(int64_t n, int64_t lda, int64_t k0,
                                                          int64_t k1, const float* a, TileOperand b,
                                                          float* out, int64_t j) {
  __m256 low[R], high[R];  // columns j .. j + 8 and j + 8 .. j + 16
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    low[r] = _mm256_loadu_ps(out + r * n + j);
    high[r] = _mm256_loadu_ps(out + r * n + j + 8);
  }
  for (int64_t l = k0; l < k1; ++l) {
    const float* bl = b.base + l * b.ldb;
    const __m256 b_low = _mm256_loadu_ps(bl), b_high = _mm256_loadu_ps(bl + 8);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m256 coefficient = _mm256_broadcast_ss(a + r * lda + l);
      low[r] = _mm256_fmadd_ps(coefficient, b_low, low[r]);
      high[r] = _mm256_fmadd_ps(coefficient, b_high, high[r]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    _mm256_storeu_ps(out + r * n + j, low[r]);
    _mm256_storeu_ps(out + r * n + j + 8, high[r]);
  }
}

// tile_avx2<R> for the number of rows R <= Max known at run time.
template <int Max>
__attribute__((target("avx2,fma"))) inline void tile_rows_avx2(int64_t rows, int64_t n, int64_t lda,
                                                               int64_t k0, int64_t k1,
                                                               const float* a, TileOperand b,
                                                               float* out, int64_t j) {
  if constexpr (Max >= 1) {
    if (rows == Max) {
      tile_avx2<Max>(n, lda, k0, k1, a, b, out, j);
    } else {
      tile_rows_avx2<Max - 1>(rows, n, lda, k0, k1, a, b, out, j);
    }
  }
}

// out [M, N] += a [M, K] @ b [K, N] over the column groups [g0, g1) (see the top). Tiles of 6
// rows x 16 columns (12 accumulators of the 16 registers: enough independent FMA chains to cover
// the FMA latency; at 16 rows 10-15% faster than 4-row tiles on the larger products), then the
// rows left. 16 columns are one 64-byte line of b a row: wider tiles (24) straddle lines and
// were slower.
//  - b itself is read in blocks of 16 of its rows, all columns of a block before the next (16
//    rows of b are 16 sequential streams the prefetcher follows; 8 to 128 measured, 16 best);
//  - its panels are read whole, a panel's K x 16 values in one sequential stream for each tile
//    of rows. That also avoids what makes b itself slow at N = 4096: its rows 16 KB apart
//    map to the same L1 sets.
__attribute__((target("avx2,fma"))) void accumulate_groups_avx2(int64_t rows, int64_t n, int64_t k,
                                                                const float* a, int64_t lda,
                                                                const float* b, const float* panels,
                                                                float* out, int64_t g0,
                                                                int64_t g1) {
  const int64_t block = panels != nullptr ? k : 16;
  for (int64_t k0 = 0; k0 < k; k0 += block) {
    const int64_t k1 = std::min(k, k0 + block);
    for (int64_t j = g0 * kGroup; j < g1 * kGroup; j += kGroup) {
      const TileOperand operand = operand_at(b, panels, n, k, j);
      int64_t m = 0;
      for (; m + 6 <= rows; m += 6) {
        tile_avx2<6>(n, lda, k0, k1, a + m * lda, operand, out + m * n, j);
      }
      tile_rows_avx2<5>(rows - m, n, lda, k0, k1, a + m * lda, operand, out + m * n, j);
    }
  }
}

// The same with AVX-512: tiles of up to 8 rows x 48 columns (24 of the 32 registers), then 16
// columns. At 16 rows it is compute-bound and about 1.6x MKL's and OpenBLAS's GEMM at the
// decoder's shapes (which pack the weight on every call).
template <int R, int C>
__attribute__((target("avx512f"))) inline void tile_avx512(int64_t n, int64_t lda, int64_t k0,
                                                           int64_t k1, const float* a,
                                                           TileOperand b, float* out, int64_t j) {
  __m512 acc[R][C];  // unrolled loops keep it in registers, as in tile_avx2
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 3
    for (int c = 0; c < C; ++c) acc[r][c] = _mm512_loadu_ps(out + r * n + j + 16 * c);
  }
  for (int64_t l = k0; l < k1; ++l) {
    const float* bl = b.base + l * b.ldb;
    __m512 bv[C];
#pragma GCC unroll 3
    for (int c = 0; c < C; ++c) bv[c] = _mm512_loadu_ps(bl + c * b.group_stride);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      __m512 coefficient = _mm512_set1_ps(a[r * lda + l]);
#pragma GCC unroll 3
      for (int c = 0; c < C; ++c) acc[r][c] = _mm512_fmadd_ps(coefficient, bv[c], acc[r][c]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 3
    for (int c = 0; c < C; ++c) _mm512_storeu_ps(out + r * n + j + 16 * c, acc[r][c]);
  }
}

// tile_avx512<R, C> for the number of rows R <= Max known at run time.
template <int C, int Max>
__attribute__((target("avx512f"))) inline void tile_rows_avx512(int64_t rows, int64_t n,
                                                                int64_t lda, int64_t k0, int64_t k1,
                                                                const float* a, TileOperand b,
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
__attribute__((target("avx512f"))) void column_tile_avx512(int64_t rows, int64_t n, int64_t lda,
                                                           int64_t k0, int64_t k1, const float* a,
                                                           TileOperand b, float* out, int64_t j) {
  int64_t m = 0;
  for (; m + 8 <= rows; m += 8) tile_avx512<8, C>(n, lda, k0, k1, a + m * lda, b, out + m * n, j);
  tile_rows_avx512<C, 7>(rows - m, n, lda, k0, k1, a + m * lda, b, out + m * n, j);
}

// As accumulate_groups_avx2, in tiles of 48 columns, then 16.
__attribute__((target("avx512f"))) void accumulate_groups_avx512(int64_t rows, int64_t n, int64_t k,
                                                                 const float* a, int64_t lda,
                                                                 const float* b,
                                                                 const float* panels, float* out,
                                                                 int64_t g0, int64_t g1) {
  const int64_t block = panels != nullptr ? k : 16;
  const int64_t wide_end = (g0 + (g1 - g0) / 3 * 3) * kGroup;
  for (int64_t k0 = 0; k0 < k; k0 += block) {
    const int64_t k1 = std::min(k, k0 + block);
    for (int64_t j = g0 * kGroup; j < wide_end; j += 3 * kGroup) {
      column_tile_avx512<3>(rows, n, lda, k0, k1, a, operand_at(b, panels, n, k, j), out, j);
    }
    for (int64_t j = wide_end; j < g1 * kGroup; j += kGroup) {
      column_tile_avx512<1>(rows, n, lda, k0, k1, a, operand_at(b, panels, n, k, j), out, j);
    }
  }
}

// The last n % 16 columns, which no vector tile covers.
__attribute__((target("avx2,fma"))) void accumulate_last_columns(int64_t rows, int64_t n, int64_t k,
                                                                 const float* a, const float* b,
                                                                 float* out) {
  for (int64_t l = 0; l < k; ++l) {
    for (int64_t m = 0; m < rows; ++m) {
      for (int64_t j = n / kGroup * kGroup; j < n; ++j)
        out[m * n + j] += a[m * k + l] * b[l * n + j];
    }
  }
}

template <>
void accumulate_product<float>(int64_t rows, int64_t n, int64_t k, const float* a, const float* b,
                               const float* panels, float* out) {
  const StepKernelIsa isa = configured_isa;
  const auto groups = [&](auto accumulate_groups) {
    // Reading panels, a tile walks all of K in a's rows for each column group: rows a multiple
    // of 4 KB apart (K = 1024, 4096, ...) would share L1 sets, so they are copied 64 bytes
    // further apart first (rows x (K + 16) floats: 2 MB at the kernel's 128 rows and K = 4096,
    // kept for the thread's next products; the values and their order are a's).
    thread_local std::vector<float> spaced;
    const float* rows_of_a = a;
    int64_t lda = k;
    if (panels != nullptr && rows > 1) {
      lda = k + kGroup;
      spaced.resize(static_cast<size_t>(rows * lda));
      for (int64_t m = 0; m < rows; ++m) std::copy(a + m * k, a + (m + 1) * k, &spaced[m * lda]);
      rows_of_a = spaced.data();
    }
    at::parallel_for(0, n / kGroup, 2048 / kGroup, [&](int64_t g0, int64_t g1) {
      accumulate_groups(rows, n, k, rows_of_a, lda, b, panels, out, g0, g1);
    });
    accumulate_last_columns(rows, n, k, a, b, out);
  };
  if (isa == StepKernelIsa::kBest && cpu::has_avx512f()) {
    groups(accumulate_groups_avx512);
  } else if (isa != StepKernelIsa::kPortable && cpu::has_avx2_fma()) {
    groups(accumulate_groups_avx2);
  } else {
    accumulate_product_portable(rows, n, k, a, b, out);
  }
}

#endif  // TTS_X86_KERNELS

// Whether accumulate_product reads panels of b (made once per batch by kernel_panels).
bool reads_panels(const torch::Tensor& b) {
#if TTS_X86_KERNELS
  return b.device().is_cpu() && b.scalar_type() == torch::kFloat && b.dim() == 2 &&
         b.size(1) >= kGroup && configured_isa != StepKernelIsa::kPortable && cpu::has_avx2_fma();
#else
  (void)b;
  return false;
#endif
}

// panels: kernel_panels(b), or undefined.
torch::Tensor kernel_product(const torch::Tensor& base, const torch::Tensor& a_in,
                             const torch::Tensor& b, const torch::Tensor& panels) {
  torch::Tensor a = a_in.contiguous();
  int64_t rows = a.size(0), k = a.size(1), n = b.size(1);
  torch::Tensor out = base.defined() ? base.expand({rows, n}).clone(at::MemoryFormat::Contiguous)
                                     : torch::zeros({rows, n}, a.options());
  AT_DISPATCH_FLOATING_TYPES(a.scalar_type(), "recurrent_product_kernel", [&] {
    accumulate_product(rows, n, k, a.data_ptr<scalar_t>(), b.data_ptr<scalar_t>(),
                       panels.defined() ? panels.data_ptr<scalar_t>() : nullptr,
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
bool kernel_is_faster(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& panels) {
  using Shape = std::tuple<int, int64_t, int64_t, int64_t, int>;  // dtype, M, K, N, threads
  static std::mutex mutex;
  static std::map<Shape, bool> faster;
  Shape shape{static_cast<int>(a.scalar_type()), a.size(0), a.size(1), b.size(1),
              at::get_num_threads()};
  std::lock_guard<std::mutex> lock(mutex);
  auto known = faster.find(shape);
  if (known != faster.end()) return known->second;
  torch::Tensor ac = a.contiguous();
  double kernel_s = best_seconds([&] { kernel_product({}, ac, b, panels); });
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

torch::Tensor kernel_panels(const torch::Tensor& b, RecurrentProductPath path) {
  if (path == RecurrentProductPath::kGemm || !reads_panels(b)) return {};
  TTS_CHECK(b.is_contiguous(), "kernel_panels: b must be contiguous");
  const int64_t k = b.size(0), groups = b.size(1) / kGroup;
  // [groups, K, 16]: panel g holds b[:, 16 g .. 16 g + 16) row by row.
  return b.narrow(1, 0, groups * kGroup).view({k, groups, kGroup}).permute({1, 0, 2}).contiguous();
}

torch::Tensor recurrent_product(const torch::Tensor& base, const torch::Tensor& a,
                                const torch::Tensor& b, RecurrentProductPath path,
                                const torch::Tensor& panels) {
  TTS_CHECK(
      !panels.defined() || (panels.dim() == 3 && panels.size(0) == b.size(1) / kGroup &&
                            panels.size(1) == b.size(0) && panels.size(2) == kGroup &&
                            panels.scalar_type() == b.scalar_type() && panels.is_contiguous()),
      "recurrent_product: panels of another operand");
  bool kernel = kernel_applies(a, b) &&
                (path == RecurrentProductPath::kKernel ||
                 (path == RecurrentProductPath::kFastest && kernel_is_faster(a, b, panels)));
  return kernel ? kernel_product(base, a, b, panels) : gemm_product(base, a, b);
}

}  // namespace detail
}  // namespace tts::tacotron2
