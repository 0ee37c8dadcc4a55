#include "tts/audio/preemphasis.h"

#include "tts/core/error.h"

namespace tts::audio {

PreEmphasis::PreEmphasis(double coefficient) : coefficient_(coefficient) {
  TTS_CHECK(coefficient >= 0 && coefficient < 1,
            "pre-emphasis: expected a coefficient in [0, 1), found {}", coefficient);
}

void PreEmphasis::apply(std::vector<float>& samples) const {
  if (!enabled()) return;
  for (size_t n = samples.size(); n-- > 1;) {
    samples[n] = static_cast<float>(samples[n] - coefficient_ * samples[n - 1]);
  }
}

void PreEmphasis::invert(std::vector<float>& samples) const {
  if (!enabled()) return;
  double previous = 0.0;
  for (float& sample : samples) {
    previous = sample + coefficient_ * previous;
    sample = static_cast<float>(previous);
  }
}

}  // namespace tts::audio
