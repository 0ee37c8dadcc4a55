// The x86 vector extensions this CPU (and its OS) offers, for the model's kernels that are chosen
// at run time (attention_score.cpp, recurrent_product.cpp). TTS_X86_KERNELS is 1 where those
// kernels are compiled (x86-64 with GCC or Clang: target attributes and intrinsics); elsewhere
// their portable versions run. Like libtorch's own CPU kernels, they use no wider instructions
// than ATEN_CPU_CAPABILITY allows when it is set (default: none of these; avx2: AVX2 + FMA;
// avx512...: both), so one variable runs the whole process as on an older CPU (`bench/step_pairs.sh
// --isa avx2`).
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TTS_X86_KERNELS 1
#include <immintrin.h>

#include <cstdlib>
#include <cstring>

namespace tts::cpu {

// ATEN_CPU_CAPABILITY allows `prefix` (unset: anything the CPU has).
inline bool capability_allows(const char* prefix) {
  static const char* const capability = std::getenv("ATEN_CPU_CAPABILITY");
  if (capability == nullptr || *capability == '\0') return true;
  if (std::strncmp(capability, "avx512", 6) == 0) return true;
  return std::strncmp(capability, prefix, std::strlen(prefix)) == 0;
}

inline bool has_avx2_fma() {
  static const bool available =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && capability_allows("avx2");
  return available;
}

inline bool has_avx512f() {
  static const bool available = __builtin_cpu_supports("avx512f") && capability_allows("avx512");
  return available;
}

}  // namespace tts::cpu
#else
#define TTS_X86_KERNELS 0
#endif
