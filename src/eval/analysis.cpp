#include "tts/eval/analysis.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <utility>

#include "tts/core/error.h"

namespace tts::eval {
namespace {

constexpr double kPi = 3.14159265358979323846;

// Frame t of Note [Evaluation frames]: kFrameLength samples centred on sample t * kHop.
void cut_frame(const std::vector<float>& samples, int64_t t, std::vector<double>& frame) {
  frame.assign(kFrameLength, 0.0);
  const int64_t start = t * kHop - kFrameLength / 2;
  const auto size = static_cast<int64_t>(samples.size());
  for (int64_t n = 0; n < kFrameLength; ++n) {
    const int64_t k = start + n;
    if (k >= 0 && k < size) frame[static_cast<size_t>(n)] = samples[static_cast<size_t>(k)];
  }
}

// SPTK's freqt: the cepstrum c[0..m1] warped by the all-pass constant `alpha` to order m2.
std::vector<double> freqt(const std::vector<double>& c, int m2, double alpha) {
  const double b = 1.0 - alpha * alpha;
  std::vector<double> g(static_cast<size_t>(m2) + 1, 0.0);
  std::vector<double> d(static_cast<size_t>(m2) + 1, 0.0);
  for (auto i = static_cast<int64_t>(c.size()) - 1; i >= 0; --i) {
    d[0] = g[0];
    g[0] = c[static_cast<size_t>(i)] + alpha * d[0];
    if (m2 >= 1) {
      d[1] = g[1];
      g[1] = b * d[0] + alpha * d[1];
    }
    for (int j = 2; j <= m2; ++j) {
      d[j] = g[j];
      g[j] = d[j - 1] + alpha * (d[j] - g[j - 1]);
    }
  }
  return g;
}

}  // namespace

int64_t frame_count(int64_t samples) { return 1 + samples / kHop; }

void fft(std::vector<double>& re, std::vector<double>& im) {
  const size_t n = re.size();
  TTS_CHECK(n > 0 && (n & (n - 1)) == 0 && im.size() == n,
            "fft: expected a power-of-two size with matching parts, found {} and {}", n, im.size());
  for (size_t i = 1, j = 0; i < n; ++i) {
    size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      std::swap(re[i], re[j]);
      std::swap(im[i], im[j]);
    }
  }
  // The twiddles e^{-2 pi i k / n}, computed once per size and thread (the analyses use two).
  thread_local std::vector<double> cos_table, sin_table;
  if (cos_table.size() != n / 2) {
    cos_table.resize(n / 2);
    sin_table.resize(n / 2);
    for (size_t k = 0; k < n / 2; ++k) {
      cos_table[k] = std::cos(-2.0 * kPi * static_cast<double>(k) / static_cast<double>(n));
      sin_table[k] = std::sin(-2.0 * kPi * static_cast<double>(k) / static_cast<double>(n));
    }
  }
  for (size_t length = 2; length <= n; length <<= 1) {
    const size_t stride = n / length;
    for (size_t start = 0; start < n; start += length) {
      for (size_t k = 0; k < length / 2; ++k) {
        const double wr = cos_table[k * stride];
        const double wi = sin_table[k * stride];
        const size_t a = start + k;
        const size_t b = a + length / 2;
        const double xr = re[b] * wr - im[b] * wi;
        const double xi = re[b] * wi + im[b] * wr;
        re[b] = re[a] - xr;
        im[b] = im[a] - xi;
        re[a] += xr;
        im[a] += xi;
      }
    }
  }
}

std::vector<std::vector<double>> mel_cepstra(const std::vector<float>& samples) {
  constexpr int kN = kFrameLength;
  std::vector<double> window(kN);
  for (int n = 0; n < kN; ++n) window[n] = 0.5 - 0.5 * std::cos(2.0 * kPi * n / kN);
  const int64_t frames = frame_count(static_cast<int64_t>(samples.size()));
  std::vector<std::vector<double>> cepstra;
  cepstra.reserve(static_cast<size_t>(frames));
  std::vector<double> re, im, log_power(kN / 2 + 1);
  for (int64_t t = 0; t < frames; ++t) {
    cut_frame(samples, t, re);
    for (int n = 0; n < kN; ++n) re[n] *= window[n];
    im.assign(kN, 0.0);
    fft(re, im);
    for (int k = 0; k <= kN / 2; ++k) log_power[k] = std::log(re[k] * re[k] + im[k] * im[k] + 1e-8);
    // The real cepstrum: the inverse DFT of the (real, even) log power spectrum.
    for (int k = 0; k < kN; ++k) re[k] = log_power[k <= kN / 2 ? k : kN - k];
    im.assign(kN, 0.0);
    fft(re, im);
    std::vector<double> cepstrum(kN / 2 + 1);
    for (int n = 0; n <= kN / 2; ++n) cepstrum[n] = re[n] / kN;
    cepstrum[0] /= 2.0;
    cepstrum[kN / 2] /= 2.0;
    cepstra.push_back(freqt(cepstrum, kCepstrumOrder, kAllPass));
  }
  return cepstra;
}

Pitch yin(const std::vector<float>& samples) {
  constexpr int kN = kFrameLength;
  const int min_period = static_cast<int>(std::floor(kSampleRate / kFmax));
  const int max_period = std::min(static_cast<int>(std::ceil(kSampleRate / kFmin)), kN - 1);
  const int periods = max_period - min_period + 1;
  const int64_t frames = frame_count(static_cast<int64_t>(samples.size()));
  Pitch pitch;
  pitch.f0.reserve(static_cast<size_t>(frames));
  pitch.voiced.reserve(static_cast<size_t>(frames));
  std::vector<double> frame, re, im;
  std::vector<double> difference(static_cast<size_t>(max_period) + 1);
  std::vector<double> cmndf(static_cast<size_t>(periods));
  for (int64_t t = 0; t < frames; ++t) {
    cut_frame(samples, t, frame);
    // The autocorrelation r(tau) by FFT, zero-padded to twice the frame.
    re.assign(2 * kN, 0.0);
    im.assign(2 * kN, 0.0);
    for (int n = 0; n < kN; ++n) re[n] = frame[n];
    fft(re, im);
    for (int k = 0; k < 2 * kN; ++k) {
      re[k] = re[k] * re[k] + im[k] * im[k];
      im[k] = 0.0;
    }
    fft(re, im);  // the power spectrum is real and even: forward = inverse up to 1/N
    const double r0 = re[0] / (2 * kN);
    double energy = 0.0;  // sum_{i < tau} x_i^2
    difference[0] = 0.0;
    for (int tau = 1; tau <= max_period; ++tau) {
      energy += frame[tau - 1] * frame[tau - 1];
      difference[tau] = 2.0 * (r0 - re[tau] / (2 * kN)) - energy;
    }
    double running = 0.0;
    for (int tau = 1; tau <= max_period; ++tau) {
      running += difference[tau];
      if (tau >= min_period) {
        cmndf[tau - min_period] = difference[tau] / (running / tau + DBL_MIN);
      }
    }
    auto trough = [&](int k) {
      if (k == 0) return cmndf[0] < cmndf[1];
      if (k == periods - 1) return cmndf[k] < cmndf[k - 1];
      return cmndf[k] < cmndf[k - 1] && cmndf[k] <= cmndf[k + 1];
    };
    int pick = -1;
    int global_min = 0;
    bool voiced = false;
    for (int k = 0; k < periods; ++k) {
      if (cmndf[k] < cmndf[global_min]) global_min = k;
      if (trough(k)) {
        if (pick < 0 && cmndf[k] < kYinThreshold) pick = k;
        if (cmndf[k] < kVoicingThreshold) voiced = true;
      }
    }
    if (pick < 0) pick = global_min;
    double shift = 0.0;
    if (pick > 0 && pick < periods - 1) {
      const double a = cmndf[pick + 1] + cmndf[pick - 1] - 2.0 * cmndf[pick];
      const double b = (cmndf[pick + 1] - cmndf[pick - 1]) / 2.0;
      if (std::abs(b) < std::abs(a)) shift = -b / a;
    }
    pitch.f0.push_back(kSampleRate / (min_period + pick + shift));
    pitch.voiced.push_back(voiced ? 1 : 0);
  }
  return pitch;
}

}  // namespace tts::eval
