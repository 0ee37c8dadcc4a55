// The audio pipeline behind preprocessing, `tts-train features` and synthesis, built from config
// section `audio`: trim -> pre-emphasis -> STFT -> |.|^magnitude_power -> mel -> compression, and
// back: decompression -> mel to linear -> Griffin-Lim -> inverse pre-emphasis. Arrays are
// time-major at this boundary: [frames, bins].
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tts/audio/compression.h"
#include "tts/audio/griffin_lim.h"
#include "tts/audio/mel_filterbank.h"
#include "tts/audio/preemphasis.h"
#include "tts/audio/stft.h"
#include "tts/audio/trimmer.h"
#include "tts/config/audio_options.h"
#include "tts/core/error.h"

namespace tts::audio {

struct Features {
  torch::Tensor mel;      // [frames, n_mels] float32, compressed (log or normalized dB), CPU
  torch::Tensor linear;   // [frames, n_fft/2+1] float32, same compression; undefined unless asked
  int64_t n_samples = 0;  // samples after trimming (what the frames cover)
  // [n_samples] float32: the trimmed signal the frames were computed from (before pre-emphasis),
  // what a vocoder learns to produce; undefined unless asked.
  torch::Tensor waveform;
};

// Audio that reads fine but gives no training example: `category()` is "silent" (nothing above
// the trimming threshold) or "too short" (fewer than n_fft samples, after trimming if on).
// Preprocessing reports it under that category instead of "bad audio".
class UnusableAudio : public Error {
 public:
  UnusableAudio(std::string category, const std::string& message)
      : Error(message), category_(std::move(category)) {}
  const std::string& category() const { return category_; }

 private:
  std::string category_;
};

class AudioProcessor {
 public:
  // Validates `options` (throws UsageError).
  explicit AudioProcessor(const config::AudioOptions& options);

  // Trims (if options.trim), pre-emphasizes, STFT, mel, compresses. Throws tts::Error on NaN/Inf
  // samples, UnusableAudio on all-silent audio or audio shorter than one frame (n_fft samples,
  // after trimming).
  Features compute(const std::vector<float>& samples, bool with_linear,
                   bool with_waveform = false) const;
  // read_audio + compute; errors name the file.
  Features compute_file(const std::string& path, bool with_linear,
                        bool with_waveform = false) const;

  // [frames, n_mels] compressed -> samples: decompress, mel -> linear (options.mel_inverse),
  // Griffin-Lim on magnitude^griffin_lim_power, inverse pre-emphasis. Output whose peak exceeds
  // 0.99 (griffin_lim_power != 1 changes the level) is scaled to peak 0.99 so it never clips.
  std::vector<float> mel_to_wav(const torch::Tensor& mel) const;
  // [frames, n_fft/2+1] compressed -> samples, like mel_to_wav without the mel inversion.
  std::vector<float> linear_to_wav(const torch::Tensor& linear) const;

  const config::AudioOptions& options() const { return options_; }
  const Stft& stft() const { return stft_; }
  const MelFilterbank& filterbank() const { return filterbank_; }
  const Compression& compression() const { return compression_; }

 private:
  std::vector<float> magnitude_to_wav(const torch::Tensor& magnitude) const;

  config::AudioOptions options_;
  Trimmer trimmer_;
  PreEmphasis preemphasis_;
  Stft stft_;
  MelFilterbank filterbank_;
  Compression compression_;
  GriffinLim griffin_lim_;
};

// A spectrogram [frames, bins] long enough for Griffin-Lim (one STFT frame of signal): a shorter
// one (a sentence whose stop token fired almost at once, a short stream window) is padded with its
// quietest value. Throws tts::Error for an empty one.
torch::Tensor padded_for_griffin_lim(const torch::Tensor& frames,
                                     const config::AudioOptions& audio);

}  // namespace tts::audio
