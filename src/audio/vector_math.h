// Element-wise float kernels for the CPU feature path. Internal to src/audio.
#pragma once

#include <cstdint>

namespace tts::audio::detail {

// out[i] = scale * ln(max(in[i], floor)) + offset, then clamped to [low, high] when clip; `in`
// may equal `out`; floor >= FLT_MIN (1.2e-38). The log is Cephes' logf (max error ~1 ulp), in
// vector registers: 8 lanes with AVX2 where the CPU has it (chosen at run time), else 4 (SSE2 on
// x86-64, or whatever the target offers); both give the same bits. NaN stays NaN and +Inf stays
// +Inf before the clamp, like the torch ops this replaces.
void scaled_log(const float* in, float* out, int64_t n, float floor, float scale, float offset,
                bool clip, float low, float high);

// x[i] = sqrt(x[i]) for x[i] >= 0.
void sqrt_in_place(float* x, int64_t n);

}  // namespace tts::audio::detail
