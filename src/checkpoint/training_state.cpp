#include "tts/checkpoint/training_state.h"

#include <algorithm>
#include <cmath>

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

bool TrainingState::note_validation(double loss, int64_t at_step) {
  // A NaN loss is never a best: it counts as a validation without improvement.
  if (best_val_step < 0 ? !std::isnan(loss) : loss < best_val_loss) {
    best_val_loss = loss;
    best_val_step = at_step;
    validations_since_best = 0;
    return true;
  }
  ++validations_since_best;
  return false;
}

}  // namespace tts::checkpoint
