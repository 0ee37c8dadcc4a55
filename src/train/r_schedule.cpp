#include "tts/train/r_schedule.h"

namespace tts::train {

data::Phase phase_at(const config::Config& config, int64_t steps_done) {
  data::Phase phase{config.model.n_frames_per_step, config.train.batch_size};
  for (const auto& row : config.train.r_schedule) {
    if (row.size() == 3 && row[0] <= steps_done) phase = {row[1], row[2]};
  }
  return phase;
}

}  // namespace tts::train
