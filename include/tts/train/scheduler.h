// When a run does what. After each step the scheduler answers which interval events are due (log,
// check replicas, validate, save), whether the run goes on, and whether the next step enters a
// new training phase (train.r_schedule); at the end, what is still owed. The loop asks; it
// decides nothing itself.
#pragma once

#include <cstdint>
#include <optional>

#include "tts/checkpoint/training_state.h"
#include "tts/config/config.h"
#include "tts/data/phase.h"

namespace tts::train {

struct Events {
  bool log = false;  // a "train" record and the progress line
  bool check_replicas =
      false;  // parameters identical on every rank (distributed.check_replicas_every)
  bool validate = false;
  bool save = false;  // a checkpoint
};

class Scheduler {
 public:
  // `max_steps`: the run's step limit (train.max_steps, or --max-steps); 0: none.
  Scheduler(const config::Config& config, int64_t max_steps);

  int64_t max_steps() const { return max_steps_; }
  // Whether the run has trained what it was asked to: max_steps steps or max_epochs epochs.
  bool done(const checkpoint::TrainingState& state) const;
  // What is due after the step that made `step` steps.
  Events after_step(int64_t step);
  // What the end of the loop still owes at `step`: the last interval's record when
  // `unlogged_steps`, a validation unless one ran at this step or the run stopped on request,
  // a checkpoint unless one was written at this step.
  Events at_end(int64_t step, bool stopped, bool unlogged_steps);
  // A checkpoint was written at `step` outside the intervals (a new best under
  // train.early_stopping): the end of the run owes none for it.
  void saved_at(int64_t step) { last_saved_ = step; }
  // The phase the next step trains in, when train.r_schedule makes it differ from state.phase.
  std::optional<data::Phase> phase_switch(const checkpoint::TrainingState& state) const;

 private:
  const config::Config& config_;
  int64_t max_steps_;
  int64_t last_validated_ = -1;
  int64_t last_saved_ = -1;
};

}  // namespace tts::train
