// Analysis window: librosa's get_window("hann", win_length, fftbins=True) (the periodic Hann
// window, w[n] = 0.5 - 0.5 cos(2 pi n / win_length)) centred in n_fft samples with zeros on both
// sides (librosa.util.pad_center: (n_fft - win_length) / 2 zeros on the left).
#pragma once

#include <torch/types.h>

#include <cstdint>

namespace tts::audio {

// [n_fft] float32 on the CPU. Requires 1 <= win_length <= n_fft.
torch::Tensor hann_window(int64_t win_length, int64_t n_fft);

}  // namespace tts::audio
