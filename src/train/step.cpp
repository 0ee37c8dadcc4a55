#include "tts/train/step.h"

#include <torch/torch.h>

#include <cmath>

#include "tts/core/error.h"
#include "tts/core/logging.h"
#include "tts/core/timer.h"
#include "tts/dist/communicator.h"
#include "tts/dist/gradient_reducer.h"
#include "update_guard.h"

namespace tts::train {

int64_t Updates::step() const { return state_->step + 1; }

void Updates::backward(size_t slot, const torch::Tensor& loss, bool last_micro_batch) {
  Stopwatch clock;
  step_->reducers_.at(slot)->begin_step(last_micro_batch);
  loss.backward();
  totals_->times.backward += clock.seconds();
}

void Updates::apply(size_t slot) {
  OptimizerSlot& optimizer = step_->family_.optimizers().at(slot);
  dist::GradientReducer& reducer = *step_->reducers_.at(slot);
  reducer.finish_step(step_->stop_wish_);
  step_->stop_agreed_ = reducer.stop_agreed();
  totals_->times.communication += reducer.last_exposed_comm_seconds();
  Stopwatch clock;
  const double grad_norm = torch::nn::utils::clip_grad_norm_(
      optimizer.parameters, optimizer.grad_clip > 0 ? optimizer.grad_clip : INFINITY);
  const double lr = optimizer.learning_rate(state_->step + 1, state_->epoch);
  state_->learning_rates.at(slot) = lr;
  // The gradients are reduced, so every rank sees the same norm and takes the same decision.
  if (!std::isfinite(grad_norm)) {
    step_->skipped_this_step_ = true;
    log::get("train")->warn(
        "step {}: non-finite loss or gradient norm ({}) of optimizer '{}'; its update is "
        "skipped; this rank's utterances: {}",
        state_->step + 1, grad_norm, optimizer.name, fmt::join(*ids_, " "));
    optimizer.optimizer->zero_grad();
  } else {
    for (auto& group : optimizer.optimizer->param_groups()) group.options().set_lr(lr);
    UpdateGuard& guard = step_->guards_.at(slot);  // Note [Non-finite updates]
    guard.save(*optimizer.optimizer);
    optimizer.optimizer->step();
    if (guard.finite(*optimizer.optimizer)) {
      totals_->grad_norm_sums.at(slot) += grad_norm;
      totals_->updates.at(slot) += 1;
    } else {
      guard.restore(*optimizer.optimizer);
      step_->skipped_this_step_ = true;
      log::get("train")->warn(
          "step {}: the update of optimizer '{}' (gradient norm {}, learning rate {}) would make "
          "a weight or a moment non-finite; it is undone and skipped; this rank's utterances: {}",
          state_->step + 1, optimizer.name, grad_norm, lr, fmt::join(*ids_, " "));
    }
  }
  totals_->times.optimizer += clock.seconds();
}

Step::Step(Family& family, dist::Communicator& comm, const config::DistributedOptions& options,
           int max_bad_steps)
    : family_(family), comm_(comm), max_bad_steps_(max_bad_steps) {
  for (OptimizerSlot& slot : family.optimizers()) {
    reducers_.push_back(std::make_unique<dist::GradientReducer>(slot.parameters, comm, options));
  }
  guards_.resize(reducers_.size());
}

Step::~Step() = default;

void Step::run(std::vector<std::unique_ptr<FamilyBatch>>& micro_batches,
               checkpoint::TrainingState& state, IntervalTotals& totals, bool stop_wish) {
  Stopwatch step_clock;
  std::vector<OptimizerSlot>& slots = family_.optimizers();
  totals.grad_norm_sums.resize(slots.size(), 0.0);
  totals.updates.resize(slots.size(), 0);
  state.learning_rates.resize(slots.size(), 0.0);
  std::vector<std::string> ids;
  for (const auto& batch : micro_batches) {
    const BatchCounts counts = batch->counts();
    totals.times.padded_frames += static_cast<double>(counts.padded_frames);
    totals.times.frames += static_cast<double>(counts.frames);
    totals.times.utterances += static_cast<double>(counts.utterances);
    ids.insert(ids.end(), batch->ids().begin(), batch->ids().end());
  }
  stop_wish_ = stop_wish;
  skipped_this_step_ = false;
  for (OptimizerSlot& slot : slots) slot.optimizer->zero_grad();
  Updates updates;
  updates.step_ = this;
  updates.totals_ = &totals;
  updates.state_ = &state;
  updates.ids_ = &ids;
  family_.train_step(micro_batches, updates);
  totals.losses.next();
  if (skipped_this_step_) {
    ++bad_steps_in_a_row_;
    TTS_CHECK(bad_steps_in_a_row_ < max_bad_steps_,
              "{} steps in a row had non-finite losses or gradients (train.max_bad_steps); the "
              "last step's utterances on rank {}: {}. Check these features (tts-train data "
              "check), lower train.learning_rate or raise train.grad_clip_thresh",
              bad_steps_in_a_row_, comm_.rank(), fmt::join(ids, " "));
  } else {
    bad_steps_in_a_row_ = 0;
  }
  totals.times.step += step_clock.seconds();
  totals.times.steps += 1;
  ++state.step;
}

bool Step::stop_agreed() const { return stop_agreed_; }

}  // namespace tts::train
