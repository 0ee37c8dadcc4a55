// Pre-emphasis y[n] = x[n] - k x[n-1] (scipy.signal.lfilter([1, -k], [1], x): x[-1] = 0) and its
// inverse x[n] = y[n] + k x[n-1] (lfilter([1], [1, -k], y)), as in Rayhane-mamah/Tacotron-2.
#pragma once

#include <vector>

namespace tts::audio {

class PreEmphasis {
 public:
  // k in [0, 1); 0 turns both directions into the identity.
  explicit PreEmphasis(double coefficient);

  void apply(std::vector<float>& samples) const;   // in place
  void invert(std::vector<float>& samples) const;  // in place
  bool enabled() const { return coefficient_ != 0.0; }

 private:
  double coefficient_;
};

}  // namespace tts::audio
