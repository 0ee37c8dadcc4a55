#include "tts/audio/window.h"

#include <torch/torch.h>

#include "tts/core/error.h"

namespace tts::audio {

torch::Tensor hann_window(int64_t win_length, int64_t n_fft) {
  TTS_CHECK(win_length >= 1 && win_length <= n_fft,
            "hann_window: expected 1 <= win_length <= n_fft, found win_length {} and n_fft {}",
            win_length, n_fft);
  torch::Tensor window = torch::hann_window(win_length, /*periodic=*/true,
                                            torch::TensorOptions().dtype(torch::kFloat64));
  const int64_t left = (n_fft - win_length) / 2;
  return torch::constant_pad_nd(window, {left, n_fft - win_length - left}).to(torch::kFloat32);
}

}  // namespace tts::audio
