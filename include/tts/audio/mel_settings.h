// Whether two mels mean the same thing: the one comparison of the audio settings that make a mel
// (or linear spectrogram), used wherever features made one way meet a consumer that expects
// another — a feature store against a training config, and a mel against the vocoder that is to
// turn it into audio (a vocoder fed mels of other settings makes noise, and nothing else says so).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tts/config/audio_options.h"

namespace tts::audio {

// How a mismatch reads: "<made_with> audio.n_mels=80 (...) but <expected_by> audio.n_mels=64
// (...): <fix>".
struct MismatchWording {
  std::string made_with;    // "features in FEATS were made with"
  std::string expected_by;  // "the config says"
  // The fix for one key, given the key and the two values as a config file writes them.
  std::function<std::string(const std::string& key, const std::string& made,
                            const std::string& expected)>
      fix;
};

// One line per setting that differs: sample_rate, n_fft, hop_length, win_length, center,
// pad_mode, n_mels, fmin, fmax, mel_scale, mel_norm, preemphasis, magnitude_power, compression and
// its fields (log: log_floor; db: min_level_db, ref_level_db, signal_normalization and, when it
// is on, symmetric, max_abs_value, allow_clipping). Empty when they agree.
std::vector<std::string> mel_settings_mismatches(const config::AudioOptions& made,
                                                 const config::AudioOptions& expected,
                                                 const MismatchWording& wording);

// The value as a config file writes it: 8000.0, true, slaney.
std::string config_text(double value);
std::string config_text(bool value);

}  // namespace tts::audio
