// Frames and decoder steps under a reduction factor r (the decoder predicts r mel frames a step):
// the one place that rounds a length up to a multiple of r.
#pragma once

#include <cstdint>

namespace tts {

// Decoder steps that cover `frames` mel frames: ceil(frames / r). r >= 1.
constexpr int64_t decoder_steps(int64_t frames, int64_t r) { return (frames + r - 1) / r; }

// `frames` rounded up to a multiple of r: the frames a batch is padded to.
constexpr int64_t padded_frames(int64_t frames, int64_t r) { return decoder_steps(frames, r) * r; }

}  // namespace tts
