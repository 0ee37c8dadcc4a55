// One optimizer step of a model family, as training and `tts-train bench` both run it: the
// family's forward and losses, then for each of its optimizers backward through that optimizer's
// gradient reducer (all-reduce overlapped with backward), the global-norm clip, a finite check
// and the update at the learning rate of the step. Timed per phase (reporting.h: StepTimes).
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tts/checkpoint/training_state.h"
#include "tts/config/distributed_options.h"
#include "tts/train/family.h"
#include "tts/train/reporting.h"

namespace tts::dist {
class Communicator;
class GradientReducer;
}  // namespace tts::dist

namespace tts::train {

class Step;
class UpdateGuard;

// What a family's train_step calls: its optimizers' backward passes and updates, and the meters
// it feeds (forward time, named losses).
class Updates {
 public:
  // The family adds its forward (and loss) seconds here.
  StepTimes& times() { return totals_->times; }
  // The family adds its named losses of the step here ("loss" first: what the log line shows).
  LossSums& losses() { return totals_->losses; }
  // The optimizer step being taken, 1-based (what the learning-rate schedule and keyed dropout
  // are given): the same on every rank and in a resumed run.
  int64_t step() const;

  // Back-propagates `loss` (already scaled: divided by the micro-batch count, weighted by the
  // rank's share of the global batch) into optimizer `slot`'s gradients, through its reducer;
  // `last_micro_batch` launches the reduction of the accumulated gradients.
  void backward(size_t slot, const torch::Tensor& loss, bool last_micro_batch);
  // Finishes `slot`'s reduction (every rank then holds the mean gradient), clips its global norm
  // and, when the norm is finite, updates at the slot's learning rate for the step; a non-finite
  // norm skips this optimizer's update (every rank sees the same norm, so all skip), and so does
  // an update that would make a weight or a moment non-finite (undone).
  void apply(size_t slot);

 private:
  friend class Step;
  Updates() = default;
  Step* step_ = nullptr;
  IntervalTotals* totals_ = nullptr;
  checkpoint::TrainingState* state_ = nullptr;
  const std::vector<std::string>* ids_ = nullptr;
};

class Step {
 public:
  // One reducer per optimizer of `family`, over its parameter set. `max_bad_steps`: consecutive
  // steps with a skipped update that end the run (train.max_bad_steps).
  Step(Family& family, dist::Communicator& comm, const config::DistributedOptions& options,
       int max_bad_steps);
  ~Step();
  Step(const Step&) = delete;
  Step& operator=(const Step&) = delete;

  // Runs one optimizer step over `micro_batches`, adds its times, counts and losses to
  // `totals`, sets state.learning_rates and advances state.step. `stop_wish`: this rank asks to
  // stop after the step (rides on the step's all-reduce; stop_agreed()).
  void run(std::vector<std::unique_ptr<FamilyBatch>>& micro_batches,
           checkpoint::TrainingState& state, IntervalTotals& totals, bool stop_wish);
  // Whether any rank asked to stop in the last step (this rank's wish alone on one rank).
  bool stop_agreed() const;

 private:
  friend class Updates;
  Family& family_;
  dist::Communicator& comm_;
  int max_bad_steps_;
  std::vector<std::unique_ptr<dist::GradientReducer>> reducers_;
  std::vector<UpdateGuard> guards_;  // one per optimizer: Note [Non-finite updates]
  bool stop_wish_ = false;
  bool stop_agreed_ = false;
  bool skipped_this_step_ = false;
  int64_t bad_steps_in_a_row_ = 0;
};

}  // namespace tts::train
