// Dynamic-range compression of magnitude spectrograms and its inverse.
//   log (NVIDIA/tacotron2):  C = ln(max(S, log_floor))
//   db  (Rayhane-mamah/Tacotron-2): D = 20 log10(max(S, 10^(min_level_db/20))) - ref_level_db,
//        then with signal_normalization: symmetric C = 2M (D - min)/(-min) - M, else
//        C = M (D - min)/(-min), clipped to the range when allow_clipping (M = max_abs_value,
//        min = min_level_db).
// Element-wise, any shape, on the input's device. A contiguous float32 CPU tensor goes through
// one fused, vectorized pass (compress_in_place); anything else (GPU, float64) through torch ops.
#pragma once

#include <torch/types.h>

#include <cstdint>

#include "tts/config/audio_options.h"

namespace tts::audio {

class Compression {
 public:
  explicit Compression(const config::AudioOptions& options);

  torch::Tensor compress(const torch::Tensor& magnitude) const;
  // The CPU path of compress() on raw memory, in place: one pass of max, log, scale and clip.
  void compress_in_place(float* values, int64_t count) const;
  // Inverse of compress (values clipped by compress come back at the clip level).
  torch::Tensor decompress(const torch::Tensor& compressed) const;

 private:
  config::AudioOptions options_;
  // compress() as scale * ln(max(x, floor)) + offset, clipped to [low, high] when clip.
  float floor_ = 0.f;
  float scale_ = 1.f;
  float offset_ = 0.f;
  bool clip_ = false;
  float low_ = 0.f;
  float high_ = 0.f;
};

}  // namespace tts::audio
