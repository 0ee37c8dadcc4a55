#include "tts/audio/stft.h"

#include <fftw3.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "tts/audio/window.h"
#include "tts/core/error.h"
#include "vector_math.h"

namespace tts::audio {
namespace {

// Buffers handed to FFTW: every one is kAlignment-aligned, like those the plans were made with,
// so the new-array execute functions may use SIMD on them.
constexpr size_t kAlignment = 64;

struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};
template <class T>
using AlignedBuffer = std::unique_ptr<T[], AlignedFree>;

template <class T>
AlignedBuffer<T> aligned_buffer(size_t count) {
  const size_t bytes = (count * sizeof(T) + kAlignment - 1) / kAlignment * kAlignment;
  void* p = std::aligned_alloc(kAlignment, bytes);
  if (p == nullptr) throw std::bad_alloc();
  return AlignedBuffer<T>(static_cast<T*>(p));
}

// One single-frame float r2c plan per n_fft, made on first use and kept for the process (never
// destroyed). FFTW's planner is not thread-safe, so making a plan holds a mutex; executing one
// with fftwf_execute_dft_r2c on other (equally aligned) arrays is thread-safe. FFTW_ESTIMATE:
// on this machine FFTW_MEASURE / FFTW_PATIENT plans for one frame ran no faster (see
// docs/benchmarks.md), and an estimated plan costs no planning time and gives the same result on
// every run.
fftwf_plan r2c_plan(int n_fft) {
  static std::mutex mutex;
  static auto* plans = new std::map<int, fftwf_plan>();  // never destroyed, like the plans
  std::lock_guard<std::mutex> lock(mutex);
  auto found = plans->find(n_fft);
  if (found != plans->end()) return found->second;
  AlignedBuffer<float> in = aligned_buffer<float>(n_fft);
  AlignedBuffer<fftwf_complex> out = aligned_buffer<fftwf_complex>(n_fft / 2 + 1);
  fftwf_plan plan =
      fftwf_plan_dft_r2c_1d(n_fft, in.get(), out.get(), FFTW_ESTIMATE | FFTW_PRESERVE_INPUT);
  TTS_CHECK(plan != nullptr, "stft: FFTW could not plan a real FFT of size {}", n_fft);
  plans->emplace(n_fft, plan);
  return plan;
}

}  // namespace

Stft::Stft(int64_t n_fft, int64_t hop_length, int64_t win_length, bool center,
           config::PadMode pad_mode)
    : n_fft_(n_fft),
      hop_length_(hop_length),
      center_(center),
      pad_mode_(pad_mode),
      window_(hann_window(win_length, n_fft)) {
  TTS_CHECK(hop_length >= 1, "stft: expected hop_length >= 1, found {}", hop_length);
  const float* w = window_.data_ptr<float>();
  window_begin_ = 0;
  while (window_begin_ < n_fft && w[window_begin_] == 0.f) ++window_begin_;
  window_end_ = n_fft;
  while (window_end_ > window_begin_ && w[window_end_ - 1] == 0.f) --window_end_;
  window_values_.assign(w + window_begin_, w + window_end_);
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
      torch::stft(x, n_fft_, hop_length_, n_fft_, window_.to(x.device()), center_,
                  std::string(config::choice_name(pad_mode_)),
                  /*normalized=*/false, /*onesided=*/true, /*return_complex=*/true);
  return spectrum.transpose(0, 1);
}

torch::Tensor Stft::magnitude(const torch::Tensor& samples, double power) const {
  if (samples.device().is_cpu()) {
    TTS_CHECK(samples.dim() == 1, "stft: expected a 1-D signal, found shape {}",
              samples.sizes().vec());
    const torch::Tensor x = samples.to(torch::kFloat32).contiguous();
    const int64_t n = x.size(0);
    TTS_CHECK(n >= n_fft_, "stft: the signal has {} samples, shorter than one frame (n_fft = {})",
              n, n_fft_);
    torch::Tensor out = torch::empty({n_frames(n), n_bins()}, torch::kFloat32);
    magnitude(x.data_ptr<float>(), n, power, out.data_ptr<float>());
    return out;
  }
  torch::Tensor magnitude = forward(samples).abs();
  if (power != 1.0) magnitude = power == 2.0 ? magnitude.square() : magnitude.pow(power);
  return magnitude.contiguous();
}

void Stft::magnitude(const float* samples, int64_t n, double power, float* out) const {
  TTS_CHECK(n >= n_fft_, "stft: the signal has {} samples, shorter than one frame (n_fft = {})", n,
            n_fft_);
  const int64_t frames = n_frames(n);
  const int64_t bins = n_bins();
  // The padded signal: n_fft/2 on each side, numpy's "reflect" (edge sample excluded; n > n_fft/2
  // holds) or zeros.
  const int64_t pad = center_ ? n_fft_ / 2 : 0;
  std::vector<float> padded(static_cast<size_t>(n + 2 * pad), 0.f);
  std::copy(samples, samples + n, padded.begin() + pad);
  if (center_ && pad_mode_ == config::PadMode::kReflect) {
    for (int64_t i = 1; i <= pad; ++i) {
      padded[pad - i] = samples[i];
      padded[pad + n - 1 + i] = samples[n - 1 - i];
    }
  }
  const fftwf_plan plan = r2c_plan(static_cast<int>(n_fft_));
  AlignedBuffer<float> frame = aligned_buffer<float>(n_fft_);
  AlignedBuffer<fftwf_complex> spectrum = aligned_buffer<fftwf_complex>(bins);
  std::fill(frame.get(), frame.get() + n_fft_, 0.f);  // outside the window: zeros, never written
  const float* w = window_values_.data();
  const int64_t span = window_end_ - window_begin_;
  for (int64_t t = 0; t < frames; ++t) {
    const float* x = padded.data() + t * hop_length_ + window_begin_;
    float* in = frame.get() + window_begin_;
    for (int64_t j = 0; j < span; ++j) in[j] = w[j] * x[j];
    fftwf_execute_dft_r2c(plan, frame.get(), spectrum.get());
    float* row = out + t * bins;
    const float* c = reinterpret_cast<const float*>(spectrum.get());
    for (int64_t k = 0; k < bins; ++k) row[k] = c[2 * k] * c[2 * k] + c[2 * k + 1] * c[2 * k + 1];
    if (power == 1.0) {
      detail::sqrt_in_place(row, bins);
    } else if (power != 2.0) {
      const float half_power = static_cast<float>(power / 2.0);
      for (int64_t k = 0; k < bins; ++k) row[k] = std::pow(row[k], half_power);
    }
  }
}

torch::Tensor Stft::inverse(const torch::Tensor& spectrum, int64_t length) const {
  TTS_CHECK(spectrum.dim() == 2 && spectrum.size(1) == n_bins(),
            "istft: expected [frames, {}], found shape {}", n_bins(), spectrum.sizes().vec());
  return torch::istft(spectrum.transpose(0, 1), n_fft_, hop_length_, n_fft_,
                      window_.to(spectrum.device()), center_, /*normalized=*/false,
                      /*onesided=*/true, length);
}

}  // namespace tts::audio
