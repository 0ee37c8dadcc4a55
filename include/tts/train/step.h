// One optimizer step of a model family, as training and `tts-train bench` both run it: the
// family's forward and losses, then for each of its optimizers backward through that optimizer's
// gradient reducer (all-reduce overlapped with backward), the global-norm clip, a finite check
// and the update at the learning rate of the step. Timed per phase (reporting.h: StepTimes).
//
// Note [No host reads in a step]: Step::run never waits for a device value. The gradient norm,
// the finite check, whether an update was kept, the Adam step counts and the stop flag stay on
// the device (device_adam.h); Step::settle reads them once, at a read point (a log interval, a
// replica check, a validation, a checkpoint, the end of a run): it logs the warnings of skipped
// updates, counts the bad steps in a row (train.max_bad_steps ends the run there, naming the step
// and its utterances), fills IntervalTotals' grad-norm sums and update counts and writes the step
// counts back into the optimizers' states.
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
class DeviceAdam;

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
  // The same number as a 0-dim int64 tensor on the parameters' device, written in place by
  // Step::begin before the step (and before each replay of a captured one): what a step that a
  // CUDA graph replays reads, where step() would stay the captured step's (Note [Replaying a
  // training step]).
  const torch::Tensor& device_step() const;

  // Back-propagates `loss` (already scaled: divided by the micro-batch count, weighted by the
  // rank's share of the global batch) into optimizer `slot`'s gradients, through its reducer;
  // `last_micro_batch` launches the reduction of the accumulated gradients.
  void backward(size_t slot, const torch::Tensor& loss, bool last_micro_batch);
  // Finishes `slot`'s reduction (every rank then holds the mean gradient), clips its global norm
  // and, when the norm is finite, updates at the slot's learning rate for the step (the device
  // buffer Step::begin wrote); a non-finite
  // norm skips this optimizer's update (every rank sees the same norm, so all skip), and so does
  // an update that would make a weight or a moment non-finite (undone). Decided on the device;
  // reported by Step::settle.
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
  // `totals` (grad norms and update counts on the device, until settle()), sets
  // state.learning_rates and advances state.step. `stop_wish`: this rank asks to stop after the
  // step (rides on the step's all-reduce; stop_agreed()). Reads nothing on the host (Note [No
  // host reads in a step]). The eager form of begin(), take() and finish(), which a replayed
  // step runs apart (Note [Replaying a training step]).
  void run(std::vector<std::unique_ptr<FamilyBatch>>& micro_batches,
           checkpoint::TrainingState& state, IntervalTotals& totals, bool stop_wish);
  // The host side before step state.step + 1: the schedule's learning rate of each optimizer for
  // it into state.learning_rates and the optimizer's groups, and those rates and the step number
  // written in place into the device buffers the update and Updates::device_step read (no host
  // read, no allocation).
  // `stop_wish`: this rank asks to stop after the step, written in place where the step's
  // all-reduce sends it (GradientReducer::set_stop_wish).
  void begin(checkpoint::TrainingState& state, bool stop_wish);
  // The step begin() prepared, without finish(): the family's train_step (forward, losses,
  // backward, the updates at the buffers' learning rates) and the record of what settle() reads.
  // What a captured graph records; state.step is left as it was.
  void take(std::vector<std::unique_ptr<FamilyBatch>>& micro_batches,
            checkpoint::TrainingState& state, IntervalTotals& totals);
  // What a captured take() left for settle(): per optimizer whether its update was kept and its
  // gradient norm, tensors the graph rewrites at each replay (undefined where the family did not
  // apply that optimizer).
  struct Captured {
    std::vector<torch::Tensor> kept, norms;
  };
  // After take() was captured (not run): its record is taken out of what settle() reads (its
  // tensors hold nothing until a replay) and returned, for replayed().
  Captured captured();
  // After a replay of the take() `record` came from, before finish(): the record of step
  // state.step + 1 for settle() (its skipped-update warnings, train.max_bad_steps), copied on the
  // device from the graph's outputs, with `micro_batches`' utterances and the learning rates
  // begin() set.
  void replayed(const Captured& record,
                const std::vector<std::unique_ptr<FamilyBatch>>& micro_batches,
                const checkpoint::TrainingState& state);
  // The host side after a step's device work was issued (take(), or the replay of a captured
  // take()): adds the micro-batches' counts and the step's `seconds` to `totals`, ends the step's
  // loss additions (LossSums::next) and advances state.step.
  static void finish(const std::vector<std::unique_ptr<FamilyBatch>>& micro_batches, double seconds,
                     checkpoint::TrainingState& state, IntervalTotals& totals);
  // A read point: reads what the steps since the last one left on the device (one host read per
  // optimizer and one for the flags), logs a warning for every skipped update, adds the grad-norm
  // sums and update counts into `totals`, writes the Adam step counts into the optimizers' states
  // (what a checkpoint saves) and updates stop_agreed(). Throws when train.max_bad_steps steps in
  // a row skipped an update, naming the step and this rank's utterances. Collective on every rank
  // at the same step (it does not communicate, but stop_agreed() must agree).
  void settle(IntervalTotals& totals);
  // Whether any rank asked to stop in a step up to the last settle() (this rank's wish alone on
  // one rank).
  bool stop_agreed() const;

 private:
  friend class Updates;
  Family& family_;
  dist::Communicator& comm_;
  int max_bad_steps_;
  std::vector<std::unique_ptr<dist::GradientReducer>> reducers_;
  std::vector<std::unique_ptr<DeviceAdam>> adams_;  // one per optimizer: Note [Device Adam]
  // Written by begin() in place, read by the step: per optimizer its learning rate (0-dim
  // float64 on its parameters' device), and the number of the step being taken (0-dim int64 on
  // the first optimizer's parameters' device).
  std::vector<torch::Tensor> learning_rates_;
  torch::Tensor device_step_;
  // What a step left on the device, until settle() reads it.
  struct Outcome {
    torch::Tensor kept;  // 0-dim bool: the update was taken
    torch::Tensor norm;  // 0-dim: the gradient norm
    double learning_rate = 0;
  };
  struct Pending {
    int64_t step = 0;
    std::vector<std::string> ids;   // this rank's utterances
    std::vector<Outcome> outcomes;  // per optimizer; undefined where the family did not apply it
  };
  std::vector<Pending> pending_;
  bool stop_wish_ = false;
  int64_t bad_steps_in_a_row_ = 0;
};

}  // namespace tts::train
