#include "tts/audio/mel_filterbank.h"

#include <torch/torch.h>

#include <cmath>
#include <vector>

#include "tts/core/error.h"

namespace tts::audio {
namespace {

// Slaney's Auditory Toolbox constants, as in librosa.
constexpr double kSlaneyStepHz = 200.0 / 3.0;
constexpr double kSlaneyLogStartHz = 1000.0;
constexpr double kSlaneyLogStartMel = kSlaneyLogStartHz / kSlaneyStepHz;  // 15
const double kSlaneyLogStep = std::log(6.4) / 27.0;

// Iterations of the accelerated projected gradient behind the "nnls" mel inversion.
constexpr int kNnlsIterations = 50;

}  // namespace

double hz_to_mel(double hz, bool htk) {
  if (htk) return 2595.0 * std::log10(1.0 + hz / 700.0);
  if (hz < kSlaneyLogStartHz) return hz / kSlaneyStepHz;
  return kSlaneyLogStartMel + std::log(hz / kSlaneyLogStartHz) / kSlaneyLogStep;
}

double mel_to_hz(double mel, bool htk) {
  if (htk) return 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0);
  if (mel < kSlaneyLogStartMel) return kSlaneyStepHz * mel;
  return kSlaneyLogStartHz * std::exp(kSlaneyLogStep * (mel - kSlaneyLogStartMel));
}

MelFilterbank::MelFilterbank(int sample_rate, int n_fft, int n_mels, double fmin, double fmax,
                             config::MelScale mel_scale, config::MelNorm norm) {
  TTS_CHECK(n_mels >= 1 && n_fft >= 2 && fmin >= 0 && fmin < fmax && fmax <= sample_rate / 2.0,
            "mel filterbank: expected n_mels >= 1, n_fft >= 2 and 0 <= fmin < fmax <= sr/2, "
            "found n_mels {}, n_fft {}, fmin {}, fmax {}, sr {}",
            n_mels, n_fft, fmin, fmax, sample_rate);
  const bool htk = mel_scale == config::MelScale::kHtk;
  const int n_bins = n_fft / 2 + 1;
  // n_mels + 2 edges, spaced like np.linspace on the mel scale.
  const double min_mel = hz_to_mel(fmin, htk);
  const double max_mel = hz_to_mel(fmax, htk);
  std::vector<double> edges(n_mels + 2);
  const double step = (max_mel - min_mel) / (n_mels + 1);
  for (int i = 0; i < n_mels + 2; ++i) edges[i] = mel_to_hz(min_mel + i * step, htk);
  edges.back() = mel_to_hz(max_mel, htk);

  const double bin_hz = 1.0 / (n_fft * (1.0 / sample_rate));  // np.fft.rfftfreq spacing
  basis_ = torch::zeros({n_mels, n_bins}, torch::kFloat32);
  auto weights = basis_.accessor<float, 2>();
  for (int m = 0; m < n_mels; ++m) {
    const double lower_width = edges[m + 1] - edges[m];
    const double upper_width = edges[m + 2] - edges[m + 1];
    const double scale = norm == config::MelNorm::kSlaney ? 2.0 / (edges[m + 2] - edges[m]) : 1.0;
    for (int k = 0; k < n_bins; ++k) {
      const double f = k * bin_hz;
      const double rising = (f - edges[m]) / lower_width;
      const double falling = (edges[m + 2] - f) / upper_width;
      weights[m][k] = static_cast<float>(std::max(0.0, std::min(rising, falling)) * scale);
    }
    int64_t begin = 0;
    while (begin < n_bins && weights[m][begin] == 0.f) ++begin;
    int64_t end = n_bins;
    while (end > begin && weights[m][end - 1] == 0.f) --end;
    band_begin_.push_back(begin);
    band_end_.push_back(end);
  }
}

MelFilterbank::MelFilterbank(const config::AudioOptions& options)
    : MelFilterbank(options.sample_rate, options.n_fft, options.n_mels, options.fmin, options.fmax,
                    options.mel_scale, options.mel_norm) {}

torch::Tensor MelFilterbank::apply(const torch::Tensor& spectrum) const {
  TTS_CHECK(spectrum.dim() == 2 && spectrum.size(1) == basis_.size(1),
            "mel filterbank: expected a [frames, {}] spectrogram, found shape {}", basis_.size(1),
            spectrum.sizes().vec());
  if (!spectrum.device().is_cpu() || spectrum.scalar_type() != torch::kFloat32) {
    return torch::matmul(spectrum, basis_.to(spectrum.device(), spectrum.scalar_type()).t());
  }
  const torch::Tensor input = spectrum.contiguous();
  const int64_t frames = input.size(0);
  const int64_t n_bins = basis_.size(1);
  const int64_t n_mels = basis_.size(0);
  torch::Tensor mel = torch::empty({frames, n_mels}, torch::kFloat32);
  const float* in = input.data_ptr<float>();
  const float* weights = basis_.data_ptr<float>();
  float* out = mel.data_ptr<float>();
  for (int64_t t = 0; t < frames; ++t) {
    const float* frame = in + t * n_bins;
    for (int64_t m = 0; m < n_mels; ++m) {
      const float* filter = weights + m * n_bins;
      // Four partial sums: independent chains the compiler can keep in flight (a single running
      // sum is one long dependency chain, and may not be reordered without -ffast-math).
      float sum[4] = {0.f, 0.f, 0.f, 0.f};
      int64_t k = band_begin_[m];
      const int64_t end = band_end_[m];
      for (; k + 4 <= end; k += 4) {
        for (int j = 0; j < 4; ++j) sum[j] += filter[k + j] * frame[k + j];
      }
      for (; k < end; ++k) sum[0] += filter[k] * frame[k];
      out[t * n_mels + m] = (sum[0] + sum[1]) + (sum[2] + sum[3]);
    }
  }
  return mel;
}

torch::Tensor MelFilterbank::to_linear(const torch::Tensor& mel, config::MelInverse method) const {
  TTS_CHECK(mel.dim() == 2 && mel.size(1) == basis_.size(0),
            "mel inversion: expected a [frames, {}] mel spectrogram, found shape {}",
            basis_.size(0), mel.sizes().vec());
  const torch::Tensor basis = basis_.to(mel.device(), torch::kFloat64);
  const torch::Tensor target = mel.to(torch::kFloat64);
  torch::Tensor x = torch::matmul(target, torch::linalg_pinv(basis).t()).clamp_min(1e-10);
  if (method == config::MelInverse::kNnls) {
    // FISTA on f(x) = ||x B^T - mel||^2 / 2 over x >= 0; 1/L with L = sigma_max(B)^2.
    const double lipschitz = std::pow(torch::linalg_svdvals(basis)[0].item<double>(), 2);
    torch::Tensor y = x;
    double t = 1.0;
    for (int i = 0; i < kNnlsIterations; ++i) {
      torch::Tensor gradient = torch::matmul(torch::matmul(y, basis.t()) - target, basis);
      torch::Tensor next = (y - gradient / lipschitz).clamp_min(0.0);
      const double t_next = (1.0 + std::sqrt(1.0 + 4.0 * t * t)) / 2.0;
      y = next + (next - x) * ((t - 1.0) / t_next);
      x = next;
      t = t_next;
    }
    x = x.clamp_min(1e-10);
  }
  return x.to(torch::kFloat32);
}

}  // namespace tts::audio
