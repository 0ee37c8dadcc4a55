// Written with GCC/Clang vector extensions rather than plain loops: GCC does not vectorize the
// plain loops without -fno-trapping-math (FP compares and int->float conversions count as
// possibly trapping), and libm calls never vectorize. The kernels are templates over the vector
// type, inlined into one function per instruction set; only pointers cross function boundaries.
#include "vector_math.h"

#include <cmath>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define TTS_AUDIO_AVX2 1
#endif

namespace tts::audio::detail {
namespace {

typedef float f32x4 __attribute__((vector_size(16)));
typedef int32_t i32x4 __attribute__((vector_size(16)));
typedef uint32_t u32x4 __attribute__((vector_size(16)));
typedef float f32x8 __attribute__((vector_size(32)));
typedef int32_t i32x8 __attribute__((vector_size(32)));
typedef uint32_t u32x8 __attribute__((vector_size(32)));

struct LogParameters {
  float floor, scale, offset, low, high;
};

// Whole vectors only: n is a multiple of the lane count.
template <class F, class I, class U>
__attribute__((always_inline)) inline void scaled_log_vectors(const float* in, float* out,
                                                              int64_t n, LogParameters p) {
  constexpr int64_t kLanes = sizeof(F) / sizeof(float);
  const F zero = {};
  const I izero = {};
  const F floor = zero + p.floor, scale = zero + p.scale, offset = zero + p.offset;
  const F low = zero + p.low, high = zero + p.high, one = zero + 1.0f;
  for (int64_t i = 0; i < n; i += kLanes) {
    F x;
    std::memcpy(&x, in + i, sizeof x);
    // mask ? a : b on all-ones / all-zeros lanes, written with bit operations.
#define TTS_SELECT(mask, a, b) \
  reinterpret_cast<F>((reinterpret_cast<I>(a) & (mask)) | (reinterpret_cast<I>(b) & ~(mask)))
    x = TTS_SELECT(x < floor, floor, x);
    // ln x: x = m 2^e with m in [sqrt(1/2), sqrt(2)), a degree-9 polynomial in m - 1.
    const I bits = reinterpret_cast<I>(x);
    const I special = reinterpret_cast<U>(bits) >= (reinterpret_cast<U>(izero) + 0x7f800000u);
    F e = __builtin_convertvector(reinterpret_cast<I>(reinterpret_cast<U>(bits) >> 23) - 126, F);
    const F m = reinterpret_cast<F>((bits & 0x007fffff) | 0x3f000000);  // in [0.5, 1)
    const I below = m < (zero + 0.707106781186547524f);
    e -= TTS_SELECT(below, one, zero);
    const F f = (m - one) + TTS_SELECT(below, m, zero);
    const F z = f * f;
    F y = zero + 7.0376836292e-2f;
    y = y * f - 1.1514610310e-1f;
    y = y * f + 1.1676998740e-1f;
    y = y * f - 1.2420140846e-1f;
    y = y * f + 1.4249322787e-1f;
    y = y * f - 1.6668057665e-1f;
    y = y * f + 2.0000714765e-1f;
    y = y * f - 2.4999993993e-1f;
    y = y * f + 3.3333331174e-1f;
    y = y * f * z;
    y += -2.12194440e-4f * e;
    y += -0.5f * z;
    const F log_x = TTS_SELECT(special, x, f + y + 0.693359375f * e);  // +Inf, NaN unchanged
    F v = scale * log_x + offset;
    v = TTS_SELECT(v < low, low, v);
    v = TTS_SELECT(v > high, high, v);
#undef TTS_SELECT
    std::memcpy(out + i, &v, sizeof v);
  }
}

template <class F, class I, class U>
__attribute__((always_inline)) inline void scaled_log_all(const float* in, float* out, int64_t n,
                                                          LogParameters p) {
  constexpr int64_t kLanes = sizeof(F) / sizeof(float);
  const int64_t whole = n / kLanes * kLanes;
  scaled_log_vectors<F, I, U>(in, out, whole, p);
  if (whole < n) {  // the last values through one padded vector
    float tail[kLanes];
    for (int64_t i = 0; i < kLanes; ++i) tail[i] = 1.0f;
    std::memcpy(tail, in + whole, static_cast<size_t>(n - whole) * sizeof(float));
    scaled_log_vectors<F, I, U>(tail, tail, kLanes, p);
    std::memcpy(out + whole, tail, static_cast<size_t>(n - whole) * sizeof(float));
  }
}

#if TTS_AUDIO_AVX2
__attribute__((target("avx2"))) void scaled_log_avx2(const float* in, float* out, int64_t n,
                                                     LogParameters p) {
  scaled_log_all<f32x8, i32x8, u32x8>(in, out, n, p);
}

bool have_avx2() {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2;
}
#endif

}  // namespace

void scaled_log(const float* in, float* out, int64_t n, float floor, float scale, float offset,
                bool clip, float low, float high) {
  const LogParameters p{floor, scale, offset, clip ? low : -INFINITY, clip ? high : INFINITY};
#if TTS_AUDIO_AVX2
  if (have_avx2()) {
    scaled_log_avx2(in, out, n, p);
    return;
  }
#endif
  scaled_log_all<f32x4, i32x4, u32x4>(in, out, n, p);
}

void sqrt_in_place(float* x, int64_t n) {
  int64_t i = 0;
#if defined(__SSE2__)
  for (; i + 4 <= n; i += 4) _mm_storeu_ps(x + i, _mm_sqrt_ps(_mm_loadu_ps(x + i)));
#endif
  for (; i < n; ++i) x[i] = std::sqrt(x[i]);
}

}  // namespace tts::audio::detail
