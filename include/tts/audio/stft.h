// Short-time Fourier transform with librosa.stft's framing: the Hann window of win_length
// zero-padded to n_fft, frames hop_length apart and, with `center`, the signal padded by n_fft/2
// on both sides (reflect or zeros) so frame t is centred on sample t * hop_length. Runs on the
// device of its input: magnitude() through FFTW on the CPU and torch::stft elsewhere; forward()
// and inverse() through torch::stft / torch::istft everywhere.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tts/config/audio_options.h"

namespace tts::audio {

class Stft {
 public:
  // pad_mode: reflect (numpy's, the edge sample excluded) or constant (zeros).
  Stft(int64_t n_fft, int64_t hop_length, int64_t win_length, bool center,
       config::PadMode pad_mode);
  explicit Stft(const config::AudioOptions& options);

  // [samples] float32 -> [frames, n_fft/2+1] complex64. The signal must hold at least n_fft
  // samples (throws tts::Error otherwise). Always torch::stft.
  torch::Tensor forward(const torch::Tensor& samples) const;
  // |forward(samples)|^power: [frames, n_fft/2+1] float32, on the input's device. On the CPU it
  // is computed by FFTW (single precision, one r2c per frame, ~3x faster than torch::stft here),
  // elsewhere (GPU) by torch::stft; the two agree to ~1e-6 relative.
  torch::Tensor magnitude(const torch::Tensor& samples, double power = 1.0) const;
  // The CPU path of magnitude() on raw memory: n samples -> n_frames(n) x n_bins() values written
  // to `out` (time-major). Thread-safe: FFTW plans are made once per n_fft for the process.
  void magnitude(const float* samples, int64_t n, double power, float* out) const;
  // Inverse by windowed overlap-add: [frames, n_fft/2+1] complex64 -> [length] float32.
  torch::Tensor inverse(const torch::Tensor& spectrum, int64_t length) const;

  // Frames forward() returns for n_samples samples.
  int64_t n_frames(int64_t n_samples) const;
  // The shortest signal length that forward() turns into `frames` frames.
  int64_t n_samples(int64_t frames) const;
  int64_t n_fft() const { return n_fft_; }
  int64_t hop_length() const { return hop_length_; }
  int64_t n_bins() const { return n_fft_ / 2 + 1; }

 private:
  int64_t n_fft_;
  int64_t hop_length_;
  bool center_;
  config::PadMode pad_mode_;
  torch::Tensor window_;  // [n_fft] float32, CPU
  // The window's non-zero span [window_begin_, window_end_) as floats, for the FFTW path.
  std::vector<float> window_values_;
  int64_t window_begin_ = 0;
  int64_t window_end_ = 0;
};

}  // namespace tts::audio
