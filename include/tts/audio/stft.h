// Short-time Fourier transform with librosa.stft's framing: the Hann window of win_length
// zero-padded to n_fft, frames hop_length apart and, with `center`, the signal padded by n_fft/2
// on both sides (reflect or zeros) so frame t is centred on sample t * hop_length. Runs on the
// device of its input (CPU or GPU) through torch::stft / torch::istft.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>

#include "tts/config/audio_options.h"

namespace tts::audio {

class Stft {
 public:
  // pad_mode: "reflect" or "constant".
  Stft(int64_t n_fft, int64_t hop_length, int64_t win_length, bool center,
       const std::string& pad_mode);
  explicit Stft(const config::AudioOptions& options);

  // [samples] float32 -> [frames, n_fft/2+1] complex64. The signal must hold at least n_fft
  // samples (throws tts::Error otherwise).
  torch::Tensor forward(const torch::Tensor& samples) const;
  // |forward(samples)|^power: [frames, n_fft/2+1] float32.
  torch::Tensor magnitude(const torch::Tensor& samples, double power = 1.0) const;
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
  std::string pad_mode_;
  torch::Tensor window_;  // [n_fft] float32, CPU
};

}  // namespace tts::audio
