// Phase reconstruction from a magnitude spectrogram: the fast Griffin-Lim algorithm of
// librosa.griffinlim (Perraudin et al. 2013, momentum 0.99), from seeded random phases so that
// results are reproducible.
#pragma once

#include <torch/types.h>

#include <cstdint>

#include "tts/audio/stft.h"

namespace tts::audio {

class GriffinLim {
 public:
  GriffinLim(Stft stft, int iterations, double momentum = 0.99, uint64_t seed = 1234);

  // [frames, n_fft/2+1] magnitude -> [length] float32 samples, on the input's device. `length`
  // defaults to (frames - 1) * hop_length.
  torch::Tensor reconstruct(const torch::Tensor& magnitude, int64_t length = -1) const;

 private:
  Stft stft_;
  int iterations_;
  double momentum_;
  uint64_t seed_;
};

// ||estimate - target||_F / ||target||_F of two magnitude spectrograms of the same shape.
double spectral_convergence(const torch::Tensor& estimate, const torch::Tensor& target);

}  // namespace tts::audio
