#include "tts/train/lr_schedule.h"

#include <algorithm>
#include <cmath>

namespace tts::train {

double learning_rate_at(const config::TrainOptions& options, int64_t step, int64_t epoch) {
  const double peak = options.learning_rate;
  auto s = static_cast<double>(std::max<int64_t>(step, 1));
  switch (options.lr_schedule) {
    case config::LrSchedule::kConstant:
      return peak;
    case config::LrSchedule::kExponential: {
      // Rayhane: lr = init * rate^((step - start) / decay_steps) after `start`, floored at lr_min.
      double after = std::max(0.0, s - static_cast<double>(options.lr_decay_start));
      double decayed = peak * std::pow(options.lr_decay_rate,
                                       after / static_cast<double>(options.lr_decay_steps));
      return std::clamp(decayed, options.lr_min, peak);
    }
    case config::LrSchedule::kStaircase:
      // r9y9's step_learning_rate_decay: init * rate^(steps done // interval).
      return peak *
             std::pow(options.lr_decay_rate, static_cast<double>((std::max<int64_t>(step, 1) - 1) /
                                                                 options.lr_decay_steps));
    case config::LrSchedule::kPerEpoch:
      // jik876's ExponentialLR stepped at the end of each epoch: init * rate^epoch.
      return peak *
             std::pow(options.lr_decay_rate, static_cast<double>(std::max<int64_t>(epoch, 0)));
    case config::LrSchedule::kNoam: {
      auto warmup = static_cast<double>(options.warmup_steps);
      return peak * std::sqrt(warmup) * std::min(s * std::pow(warmup, -1.5), 1.0 / std::sqrt(s));
    }
  }
  return peak;
}

}  // namespace tts::train
