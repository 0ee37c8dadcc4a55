#include "tts/audio/stft.h"

#include <torch/torch.h>

#include "tts/audio/window.h"
#include "tts/core/error.h"

namespace tts::audio {

Stft::Stft(int64_t n_fft, int64_t hop_length, int64_t win_length, bool center,
           const std::string& pad_mode)
    : n_fft_(n_fft),
      hop_length_(hop_length),
      center_(center),
      pad_mode_(pad_mode),
      window_(hann_window(win_length, n_fft)) {
  TTS_CHECK(hop_length >= 1, "stft: expected hop_length >= 1, found {}", hop_length);
  TTS_CHECK(pad_mode == "reflect" || pad_mode == "constant",
            "stft: expected pad_mode reflect or constant, found '{}'", pad_mode);
}

Stft::Stft(const config::AudioOptions& options)
    : Stft(options.n_fft, options.hop_length, options.win_length, options.center,
           options.pad_mode) {}

int64_t Stft::n_frames(int64_t n_samples) const {
  const int64_t padded = center_ ? n_samples + 2 * (n_fft_ / 2) : n_samples;
  return padded < n_fft_ ? 0 : 1 + (padded - n_fft_) / hop_length_;
}

int64_t Stft::n_samples(int64_t frames) const {
  const int64_t padded = (frames - 1) * hop_length_ + n_fft_;
  return center_ ? padded - 2 * (n_fft_ / 2) : padded;
}

torch::Tensor Stft::forward(const torch::Tensor& samples) const {
  TTS_CHECK(samples.dim() == 1, "stft: expected a 1-D signal, found shape {}",
            samples.sizes().vec());
  TTS_CHECK(samples.size(0) >= n_fft_,
            "stft: the signal has {} samples, shorter than one frame (n_fft = {})", samples.size(0),
            n_fft_);
  torch::Tensor x = samples.to(torch::kFloat32);
  torch::Tensor spectrum =
      torch::stft(x, n_fft_, hop_length_, n_fft_, window_.to(x.device()), center_, pad_mode_,
                  /*normalized=*/false, /*onesided=*/true, /*return_complex=*/true);
  return spectrum.transpose(0, 1);
}

torch::Tensor Stft::magnitude(const torch::Tensor& samples, double power) const {
  torch::Tensor magnitude = forward(samples).abs();
  if (power != 1.0) magnitude = power == 2.0 ? magnitude.square() : magnitude.pow(power);
  return magnitude.contiguous();
}

torch::Tensor Stft::inverse(const torch::Tensor& spectrum, int64_t length) const {
  TTS_CHECK(spectrum.dim() == 2 && spectrum.size(1) == n_bins(),
            "istft: expected [frames, {}], found shape {}", n_bins(), spectrum.sizes().vec());
  return torch::istft(spectrum.transpose(0, 1), n_fft_, hop_length_, n_fft_,
                      window_.to(spectrum.device()), center_, /*normalized=*/false,
                      /*onesided=*/true, length);
}

}  // namespace tts::audio
