// Where training is: enough to continue exactly where it stopped. A checkpoint stores it
// (checkpoint.h), so it lives beside the checkpoint; the trainer holds the run's one copy of it,
// with the phase in force and the learning rates of the last step, which reporting reads.
#pragma once

#include <cstdint>
#include <vector>

#include "tts/data/phase.h"

namespace tts::checkpoint {

struct TrainingState {
  int64_t step = 0;            // optimizer steps done
  int64_t epoch = 0;           // current epoch (0-based)
  int64_t batch_in_epoch = 0;  // global batches of `epoch` already consumed
  int64_t world_size = 1;      // ranks it was trained with
  // The r and per-rank batch in force. Checkpoints of older versions lack r (0 here: the config
  // they hold says it) and may lack the batch size (0).
  data::Phase phase{0, 0};
  // The learning rate of each optimizer of the family (train/family.h) at the last step: set by
  // the step that used it, not stored (the schedules give it again from step and epoch).
  std::vector<double> learning_rates;
  // The lowest validation loss so far (train.early_stopping watches it), the step it was
  // measured at (-1: no validation yet) and the validations since that did not go below it.
  double best_val_loss = 0;
  int64_t best_val_step = -1;
  int64_t validations_since_best = 0;

  // Counts a validation of loss `loss` at `step`; true when it is a new best.
  bool note_validation(double loss, int64_t step);

  // Global batch: per-rank batch x ranks (at least 1 for older checkpoints that lack one).
  int64_t global_batch() const;
  // Continues under `phase` on `world_size` ranks. An epoch's global batches depend only on the
  // global batch size: with the same global batch the epoch continues exactly where it stopped,
  // on any number of ranks; with another, after the same number of utterances (rounded down to a
  // whole batch). Resuming and r_schedule switches use this one rule, so a run resumed across a
  // switch repeats an uninterrupted one.
  void continue_with(const data::Phase& phase, int64_t world_size);
};

}  // namespace tts::checkpoint
