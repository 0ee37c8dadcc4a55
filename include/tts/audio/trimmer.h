// Leading/trailing silence trimming like librosa.effects.trim (librosa 0.10): frame RMS with
// centred zero padding (frame_length, hop_length), in dB relative to the loudest frame; frames
// above -top_db are non-silent; the kept range runs from the first non-silent frame's start to
// one hop past the last one's start (capped at the signal length).
#pragma once

#include <cstdint>
#include <vector>

namespace tts::audio {

// Sample indices [start, end) to keep.
struct TrimRange {
  int64_t start = 0;
  int64_t end = 0;
};

class Trimmer {
 public:
  Trimmer(double top_db, int64_t frame_length, int64_t hop_length);

  // Throws tts::Error when nothing would be left: an empty signal, or one whose loudest frame
  // is below kSilenceDbfs (all zeros or near-silence, where librosa would keep everything).
  TrimRange find(const std::vector<float>& samples) const;

  // Loudest-frame RMS below this level (dB re full scale) counts as all silence.
  static constexpr double kSilenceDbfs = -100.0;

 private:
  double top_db_;
  int64_t frame_length_;
  int64_t hop_length_;
};

}  // namespace tts::audio
