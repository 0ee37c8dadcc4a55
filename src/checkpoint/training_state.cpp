#include "tts/checkpoint/training_state.h"

#include <algorithm>

namespace tts::checkpoint {

int64_t TrainingState::global_batch() const {
  return std::max<int64_t>(phase.batch_size, 1) * std::max<int64_t>(world_size, 1);
}

void TrainingState::continue_with(const data::Phase& next, int64_t ranks) {
  const int64_t old_global = global_batch();
  const int64_t new_global = static_cast<int64_t>(next.batch_size) * ranks;
  if (old_global != new_global) batch_in_epoch = batch_in_epoch * old_global / new_global;
  phase = next;
  world_size = ranks;
}

}  // namespace tts::checkpoint
