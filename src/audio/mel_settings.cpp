#include "tts/audio/mel_settings.h"

#include <fmt/format.h>

#include <type_traits>

namespace tts::audio {

std::string config_text(double value) {
  std::string text = fmt::format("{}", value);
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  return text;
}

std::string config_text(bool value) { return value ? "true" : "false"; }

namespace {

template <class T>
std::string show(const T& value) {
  if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, double>) {
    return config_text(value);
  } else {
    return fmt::format("{}", value);
  }
}

class Collector {
 public:
  explicit Collector(const MismatchWording& wording) : wording_(wording) {}

  // `note(value, long_form)` says what a value means ("linear spectrograms have 1025 bins"; short
  // form "513 bins").
  template <class T, class Note>
  void compare(const char* key, const T& made, const T& expected, Note note) {
    if (made == expected) return;
    std::string made_note = note(made, true);
    std::string expected_note = note(expected, false);
    lines_.push_back(fmt::format("{} {}={}{} but {} {}={}{}: {}", wording_.made_with, key,
                                 show(made), made_note.empty() ? "" : " (" + made_note + ")",
                                 wording_.expected_by, key, show(expected),
                                 expected_note.empty() ? "" : " (" + expected_note + ")",
                                 wording_.fix(key, show(made), show(expected))));
  }
  template <class T>
  void compare(const char* key, const T& made, const T& expected) {
    compare(key, made, expected, [](const T&, bool) { return std::string(); });
  }
  std::vector<std::string> take() { return std::move(lines_); }

 private:
  const MismatchWording& wording_;
  std::vector<std::string> lines_;
};

}  // namespace

std::vector<std::string> mel_settings_mismatches(const config::AudioOptions& s,
                                                 const config::AudioOptions& c,
                                                 const MismatchWording& wording) {
  Collector m(wording);
  m.compare("audio.sample_rate", s.sample_rate, c.sample_rate);
  m.compare("audio.n_fft", s.n_fft, c.n_fft, [](int n_fft, bool long_form) {
    return fmt::format("{}{} bins", long_form ? "linear targets have " : "", n_fft / 2 + 1);
  });
  m.compare("audio.hop_length", s.hop_length, c.hop_length);
  m.compare("audio.win_length", s.win_length, c.win_length);
  m.compare("audio.center", s.center, c.center);
  m.compare("audio.pad_mode", s.pad_mode, c.pad_mode);
  m.compare("audio.n_mels", s.n_mels, c.n_mels, [](int n, bool long_form) {
    return fmt::format("{}{} channels", long_form ? "mel targets have " : "", n);
  });
  m.compare("audio.fmin", s.fmin, c.fmin);
  m.compare("audio.fmax", s.fmax, c.fmax);
  m.compare("audio.mel_scale", s.mel_scale, c.mel_scale);
  m.compare("audio.mel_norm", s.mel_norm, c.mel_norm);
  m.compare("audio.preemphasis", s.preemphasis, c.preemphasis);
  m.compare("audio.magnitude_power", s.magnitude_power, c.magnitude_power);
  m.compare("audio.compression", s.compression, c.compression);
  if (s.compression == c.compression && c.compression == config::Compression::kLog) {
    m.compare("audio.log_floor", s.log_floor, c.log_floor);
  } else if (s.compression == c.compression && c.compression == config::Compression::kDb) {
    m.compare("audio.min_level_db", s.min_level_db, c.min_level_db);
    m.compare("audio.ref_level_db", s.ref_level_db, c.ref_level_db);
    m.compare("audio.signal_normalization", s.signal_normalization, c.signal_normalization);
    if (c.signal_normalization && s.signal_normalization) {
      m.compare("audio.symmetric", s.symmetric, c.symmetric);
      m.compare("audio.max_abs_value", s.max_abs_value, c.max_abs_value);
      m.compare("audio.allow_clipping", s.allow_clipping, c.allow_clipping);
    }
  }
  return m.take();
}

}  // namespace tts::audio
