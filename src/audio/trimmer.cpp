#include "tts/audio/trimmer.h"

#include <algorithm>
#include <cmath>

#include "tts/core/error.h"

namespace tts::audio {

Trimmer::Trimmer(double top_db, int64_t frame_length, int64_t hop_length)
    : top_db_(top_db), frame_length_(frame_length), hop_length_(hop_length) {
  TTS_CHECK(top_db > 0 && frame_length >= 1 && hop_length >= 1,
            "trimmer: expected top_db > 0, frame_length >= 1, hop_length >= 1, found {}, {}, {}",
            top_db, frame_length, hop_length);
}

TrimRange Trimmer::find(const std::vector<float>& samples) const {
  const int64_t n = static_cast<int64_t>(samples.size());
  TTS_CHECK(n > 0, "trimming: the signal is empty");
  // Frame t covers [t*hop - frame_length/2, t*hop - frame_length/2 + frame_length) of the signal
  // padded with zeros (librosa.feature.rms, center=True, pad_mode="constant").
  std::vector<double> cumulative(n + 1, 0.0);
  for (int64_t i = 0; i < n; ++i) {
    cumulative[i + 1] = cumulative[i] + static_cast<double>(samples[i]) * samples[i];
  }
  const int64_t half = frame_length_ / 2;
  const int64_t n_frames = 1 + (n + 2 * half - frame_length_) / hop_length_;
  std::vector<double> power(n_frames);
  for (int64_t t = 0; t < n_frames; ++t) {
    const int64_t begin = std::clamp<int64_t>(t * hop_length_ - half, 0, n);
    const int64_t end = std::clamp<int64_t>(t * hop_length_ - half + frame_length_, 0, n);
    power[t] = std::max(0.0, cumulative[end] - cumulative[begin]) / frame_length_;
  }
  constexpr double kAmin = 1e-10;  // librosa.amplitude_to_db's amin (1e-5) squared
  const double peak = *std::max_element(power.begin(), power.end());
  TTS_CHECK(10.0 * std::log10(std::max(peak, kAmin)) > kSilenceDbfs,
            "all silence: the loudest {}-sample frame is {:.1f} dB re full scale (at most {} dB); "
            "trimming would leave nothing. Drop the file or set audio.trim: false",
            frame_length_, 10.0 * std::log10(std::max(peak, 1e-30)), kSilenceDbfs);
  const double reference_db = 10.0 * std::log10(std::max(peak, kAmin));
  int64_t first = -1;
  int64_t last = -1;
  for (int64_t t = 0; t < n_frames; ++t) {
    if (10.0 * std::log10(std::max(power[t], kAmin)) - reference_db > -top_db_) {
      if (first < 0) first = t;
      last = t;
    }
  }
  TrimRange range;
  range.start = first * hop_length_;
  range.end = std::min(n, (last + 1) * hop_length_);
  TTS_CHECK(range.end > range.start, "trimming would leave nothing (range [{}, {}) of {} samples)",
            range.start, range.end, n);
  return range;
}

}  // namespace tts::audio
