#include "tts/models/hifigan/training/mel_loss.h"

#include "tts/audio/mel_filterbank.h"
#include "tts/core/error.h"

namespace tts::hifigan {
namespace {

namespace F = torch::nn::functional;

// jik876's additive floor under the squared magnitude (keeps the sqrt's gradient finite at 0).
constexpr double kMagnitudeFloor = 1e-9;
// Its clamp before the logarithm (dynamic_range_compression_torch's clip_val).
constexpr double kLogFloor = 1e-5;

}  // namespace

LossMel::LossMel(const config::AudioOptions& audio, double fmax_for_loss, torch::Device device)
    : n_fft_(audio.n_fft), hop_(audio.hop_length), win_(audio.win_length) {
  const double fmax = fmax_for_loss > 0 ? fmax_for_loss : audio.sample_rate / 2.0;
  TTS_CHECK(fmax <= audio.sample_rate / 2.0 && fmax > audio.fmin,
            "hifigan::LossMel: hifigan.fmax_for_loss is {} Hz; expected above audio.fmin ({}) and "
            "at most half the sample rate ({}); 0 means the latter",
            fmax_for_loss, audio.fmin, audio.sample_rate / 2.0);
  TTS_CHECK(win_ <= n_fft_ && hop_ >= 1 && hop_ <= n_fft_,
            "hifigan::LossMel: expected hop_length ({}) and win_length ({}) at most n_fft ({})",
            hop_, win_, n_fft_);
  window_ = torch::hann_window(win_).to(device);
  basis_ = audio::MelFilterbank(audio.sample_rate, audio.n_fft, audio.n_mels, audio.fmin, fmax,
                                audio.mel_scale, audio.mel_norm)
               .basis()
               .to(device);
}

torch::Tensor LossMel::operator()(const torch::Tensor& audio) const {
  const int64_t pad = (n_fft_ - hop_) / 2;
  TTS_CHECK(audio.dim() == 2 && audio.size(1) > pad,
            "hifigan::LossMel: expected audio [batch, samples] of more than {} samples, found "
            "shape {}",
            pad, audio.sizes().vec());
  const torch::Tensor padded =
      F::pad(audio.unsqueeze(1), F::PadFuncOptions({pad, pad}).mode(torch::kReflect)).squeeze(1);
  const torch::Tensor spectrum =
      torch::view_as_real(torch::stft(padded, n_fft_, hop_, win_, window_, /*center=*/false,
                                      "reflect", /*normalized=*/false, /*onesided=*/true,
                                      /*return_complex=*/true));
  const torch::Tensor magnitude = torch::sqrt(spectrum.pow(2).sum(-1) + kMagnitudeFloor);
  return torch::log(torch::clamp(torch::matmul(basis_, magnitude), kLogFloor));
}

}  // namespace tts::hifigan
