#include "tts/train/r_schedule.h"

namespace tts::train {

data::Phase phase_at(const config::Config& config, int64_t steps_done) {
  data::Phase phase{config.model.n_frames_per_step, config.train.batch_size};
  for (const config::RScheduleRow& row : config.train.r_schedule) {
    if (row.from_step <= steps_done) phase = {row.r, row.batch_size};
  }
  return phase;
}

}  // namespace tts::train
