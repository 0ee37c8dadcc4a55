// The x86 vector extensions this CPU (and its OS) offers, for the model's kernels that are chosen
// at run time (attention_score.cpp, step_product.cpp). TTS_X86_KERNELS is 1 where those
// kernels are compiled (x86-64 with GCC or Clang: target attributes and intrinsics); elsewhere
// their portable versions run.
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TTS_X86_KERNELS 1
#include <immintrin.h>

namespace tts::cpu {

inline bool has_avx2_fma() {
  static const bool available = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return available;
}

inline bool has_avx512f() {
  static const bool available = __builtin_cpu_supports("avx512f");
  return available;
}

}  // namespace tts::cpu
#else
#define TTS_X86_KERNELS 0
#endif
