// The log-mel spectrogram of jik876/hifi-gan's meldataset.mel_spectrogram, differentiable, for the
// generator's L1 mel loss: the waveform reflect-padded by (n_fft - hop) / 2 on both sides, an
// uncentered STFT with a periodic Hann window of win_length (zero-padded to n_fft), magnitudes
// sqrt(|X|^2 + 1e-9), the mel filterbank of the audio section (librosa's slaney filterbank for
// jik876's settings) up to `fmax_for_loss`, and ln(max(x, 1e-5)). Each mel frame covers hop
// samples, so T samples give T / hop frames.
#pragma once

#include <torch/torch.h>

#include "tts/config/audio_options.h"

namespace tts::hifigan {

class LossMel {
 public:
  // fmax_for_loss: the highest filter edge in Hz; 0: sample_rate / 2 (jik876's null).
  LossMel(const config::AudioOptions& audio, double fmax_for_loss, torch::Device device);
  // audio [B, T] -> log mel [B, n_mels, frames]; T must exceed (n_fft - hop) / 2 (the reflection).
  torch::Tensor operator()(const torch::Tensor& audio) const;

 private:
  int64_t n_fft_, hop_, win_;
  torch::Tensor window_;  // [win_length]
  torch::Tensor basis_;   // [n_mels, n_fft / 2 + 1]
};

}  // namespace tts::hifigan
