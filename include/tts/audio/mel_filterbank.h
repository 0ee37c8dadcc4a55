// Triangular mel filterbank identical to librosa.filters.mel (librosa 0.10): n_mels + 2 edges
// equally spaced on the mel scale between fmin and fmax, linear interpolation on the FFT bin
// frequencies, optional Slaney area normalization (2 / (f[i+2] - f[i])).
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tts/config/audio_options.h"

namespace tts::audio {

// Hz <-> mel. htk: 2595 log10(1 + f/700). Slaney (librosa's default, htk=false): linear below
// 1 kHz (f / (200/3)), logarithmic above (15 + ln(f/1000) / (ln 6.4 / 27)).
double hz_to_mel(double hz, bool htk);
double mel_to_hz(double mel, bool htk);

class MelFilterbank {
 public:
  // mel_scale: slaney (librosa's default) or htk; norm: slaney (area) or none.
  MelFilterbank(int sample_rate, int n_fft, int n_mels, double fmin, double fmax,
                config::MelScale mel_scale, config::MelNorm norm);
  explicit MelFilterbank(const config::AudioOptions& options);

  // [n_mels, n_fft/2+1] float32, CPU (computed in double, like librosa, then rounded).
  const torch::Tensor& basis() const { return basis_; }
  // [frames, n_fft/2+1] -> [frames, n_mels], on the input's device. On the CPU only each
  // filter's non-zero band is summed (a dense product spends ~95% of its time on zeros).
  torch::Tensor apply(const torch::Tensor& spectrum) const;
  // Approximate inverse [frames, n_mels] -> [frames, n_fft/2+1], non-negative. method "pinv":
  // the pseudo-inverse, clamped at 1e-10 (Rayhane's _mel_to_linear); "nnls": non-negative least
  // squares min ||x B^T - mel|| over x >= 0 (librosa.feature.inverse.mel_to_stft), solved by
  // accelerated projected gradient from the clamped pseudo-inverse.
  torch::Tensor to_linear(const torch::Tensor& mel, config::MelInverse method) const;

 private:
  torch::Tensor basis_;
  std::vector<int64_t> band_begin_;  // per filter: first bin with a non-zero weight
  std::vector<int64_t> band_end_;    // per filter: one past the last such bin
};

}  // namespace tts::audio
