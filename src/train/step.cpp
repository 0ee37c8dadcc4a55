#include "tts/train/step.h"

#include <torch/torch.h>

#include <cmath>

#include "tts/checkpoint/optimizer_compat.h"
#include "tts/core/error.h"
#include "tts/core/host_read.h"
#include "tts/core/logging.h"
#include "tts/core/timer.h"
#include "tts/dist/communicator.h"
#include "tts/dist/gradient_reducer.h"
#include "tts/train/device_adam.h"

namespace tts::train {

int64_t Updates::step() const { return state_->step + 1; }

const torch::Tensor& Updates::device_step() const { return step_->device_step_; }

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
  totals_->times.communication += reducer.last_exposed_comm_seconds();
  Stopwatch clock;
  torch::NoGradGuard no_grad;
  const torch::Tensor grad_norm = clip_grad_norm(
      optimizer.parameters, optimizer.grad_clip > 0 ? optimizer.grad_clip : INFINITY);
  // The gradients are reduced, so every rank sees the same norm and takes the same decision. A
  // non-finite norm skips the update, and so does an update that would make a weight or a moment
  // non-finite (Note [Non-finite updates]); decided on the device, reported by Step::settle.
  // Distributed, which parameters some rank used this step (Note [Used parameters]), in the
  // optimizer's order.
  std::vector<torch::Tensor> in_order;
  for (auto& group : optimizer.optimizer->param_groups()) {
    for (const torch::Tensor& p : group.params()) in_order.push_back(p);
  }
  const torch::Tensor kept = step_->adams_.at(slot)->step(
      step_->learning_rates_.at(slot), torch::isfinite(grad_norm), reducer.used_mask(in_order));
  const torch::Tensor norm = grad_norm.to(torch::kFloat64);
  totals_->device_grad_norm_sums.at(slot).add_(torch::where(kept, norm, torch::zeros_like(norm)));
  totals_->device_updates.at(slot).add_(kept);
  step_->pending_.back().outcomes.at(slot) =
      Step::Outcome{kept, norm, state_->learning_rates.at(slot)};
  totals_->times.optimizer += clock.seconds();
}

Step::Step(Family& family, dist::Communicator& comm, const config::DistributedOptions& options,
           int max_bad_steps)
    : family_(family), comm_(comm), max_bad_steps_(max_bad_steps) {
  for (OptimizerSlot& slot : family.optimizers()) {
    reducers_.push_back(std::make_unique<dist::GradientReducer>(slot.parameters, comm, options));
  }
  for (OptimizerSlot& slot : family.optimizers()) {
    adams_.push_back(std::make_unique<DeviceAdam>(*slot.optimizer));
  }
  // On the device of each optimizer's first parameter, where DeviceAdam updates.
  auto device_of = [](const OptimizerSlot& slot) {
    for (const auto& group : slot.optimizer->param_groups()) {
      if (!group.params().empty()) return group.params().front().device();
    }
    return torch::Device(torch::kCPU);
  };
  for (const OptimizerSlot& slot : family.optimizers()) {
    learning_rates_.push_back(
        torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat64).device(device_of(slot))));
  }
  const torch::Device first =
      family.optimizers().empty() ? torch::Device(torch::kCPU) : device_of(family.optimizers()[0]);
  device_step_ = torch::zeros({}, torch::TensorOptions().dtype(torch::kInt64).device(first));
}

Step::~Step() = default;

void Step::run(std::vector<std::unique_ptr<FamilyBatch>>& micro_batches,
               checkpoint::TrainingState& state, IntervalTotals& totals, bool stop_wish) {
  Stopwatch step_clock;
  begin(state, stop_wish);
  take(micro_batches, state, totals);
  finish(micro_batches, step_clock.seconds(), state, totals);
}

void Step::begin(checkpoint::TrainingState& state, bool stop_wish) {
  std::vector<OptimizerSlot>& slots = family_.optimizers();
  state.learning_rates.resize(slots.size(), 0.0);
  for (size_t i = 0; i < slots.size(); ++i) {
    const double lr = slots[i].learning_rate(state.step + 1, state.epoch);
    state.learning_rates[i] = lr;
    for (auto& group : slots[i].optimizer->param_groups()) group.options().set_lr(lr);
    learning_rates_[i].fill_(lr);
  }
  device_step_.fill_(state.step + 1);
  stop_wish_ = stop_wish;
  for (auto& reducer : reducers_) reducer->set_stop_wish(stop_wish);
}

void Step::take(std::vector<std::unique_ptr<FamilyBatch>>& micro_batches,
                checkpoint::TrainingState& state, IntervalTotals& totals) {
  std::vector<OptimizerSlot>& slots = family_.optimizers();
  totals.grad_norm_sums.resize(slots.size(), 0.0);
  totals.updates.resize(slots.size(), 0);
  if (totals.device_updates.size() != slots.size()) {
    const torch::Device device = slots.front().parameters.front().device();
    totals.device_grad_norm_sums.clear();
    totals.device_updates.clear();
    for (size_t i = 0; i < slots.size(); ++i) {
      totals.device_grad_norm_sums.push_back(
          torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat64).device(device)));
      totals.device_updates.push_back(
          torch::zeros({}, torch::TensorOptions().dtype(torch::kInt64).device(device)));
    }
  }
  std::vector<std::string> ids;
  for (const auto& batch : micro_batches) {
    ids.insert(ids.end(), batch->ids().begin(), batch->ids().end());
  }
  pending_.push_back(Pending{state.step + 1, ids, std::vector<Outcome>(slots.size())});
  for (OptimizerSlot& slot : slots) checkpoint::compat::zero_grad_in_place(*slot.optimizer);
  Updates updates;
  updates.step_ = this;
  updates.totals_ = &totals;
  updates.state_ = &state;
  updates.ids_ = &ids;
  family_.train_step(micro_batches, updates);
}

void Step::finish(const std::vector<std::unique_ptr<FamilyBatch>>& micro_batches, double seconds,
                  checkpoint::TrainingState& state, IntervalTotals& totals) {
  for (const auto& batch : micro_batches) {
    const BatchCounts counts = batch->counts();
    totals.times.padded_frames += static_cast<double>(counts.padded_frames);
    totals.times.frames += static_cast<double>(counts.frames);
    totals.times.utterances += static_cast<double>(counts.utterances);
  }
  totals.losses.next();
  totals.times.step += seconds;
  totals.times.steps += 1;
  ++state.step;
}

Step::Captured Step::captured() {
  TTS_CHECK(!pending_.empty(), "Step::captured: no take() to have captured");
  Captured record;
  for (const Outcome& outcome : pending_.back().outcomes) {
    record.kept.push_back(outcome.kept);
    record.norms.push_back(outcome.norm);
  }
  pending_.pop_back();
  return record;
}

void Step::replayed(const Captured& record,
                    const std::vector<std::unique_ptr<FamilyBatch>>& micro_batches,
                    const checkpoint::TrainingState& state) {
  Pending pending{state.step + 1, {}, std::vector<Outcome>(record.kept.size())};
  for (const auto& batch : micro_batches) {
    pending.ids.insert(pending.ids.end(), batch->ids().begin(), batch->ids().end());
  }
  for (size_t slot = 0; slot < record.kept.size(); ++slot) {
    if (!record.kept[slot].defined()) continue;
    // Copies on the device, queued after the replay: the next replay rewrites the graph's own.
    pending.outcomes[slot] = Outcome{record.kept[slot].clone(), record.norms[slot].clone(),
                                     state.learning_rates.at(slot)};
  }
  pending_.push_back(std::move(pending));
}

void Step::settle(IntervalTotals& totals) {
  std::vector<OptimizerSlot>& slots = family_.optimizers();
  for (auto& adam : adams_) adam->write_back();
  for (auto& reducer : reducers_) reducer->settle();
  // Everything else in one host read: per pending step and applied optimizer (kept, norm), then
  // per optimizer (grad-norm sum, updates).
  std::vector<torch::Tensor> values;
  for (const Pending& pending : pending_) {
    for (const Outcome& outcome : pending.outcomes) {
      if (!outcome.kept.defined()) continue;
      values.push_back(outcome.kept.to(torch::kFloat64).reshape({1}));
      values.push_back(outcome.norm.reshape({1}).to(outcome.kept.device()));
    }
  }
  const size_t sums_at = values.size();
  for (size_t i = 0; i < totals.device_updates.size(); ++i) {
    values.push_back(totals.device_grad_norm_sums[i].reshape({1}));
    values.push_back(totals.device_updates[i].to(torch::kFloat64).reshape({1}));
  }
  std::vector<Pending> pending = std::move(pending_);
  pending_.clear();
  if (values.empty()) return;
  const torch::Tensor read = host_read(torch::cat(values));
  const double* v = read.data_ptr<double>();
  for (size_t i = 0; i < totals.device_updates.size(); ++i) {
    totals.grad_norm_sums.at(i) += v[sums_at + 2 * i];
    totals.updates.at(i) += static_cast<int64_t>(v[sums_at + 2 * i + 1]);
    totals.device_grad_norm_sums[i].zero_();
    totals.device_updates[i].zero_();
  }
  size_t at = 0;
  for (const Pending& step : pending) {
    bool skipped = false;
    for (size_t slot = 0; slot < step.outcomes.size(); ++slot) {
      const Outcome& outcome = step.outcomes[slot];
      if (!outcome.kept.defined()) continue;
      const bool kept = v[at] != 0;
      const double grad_norm = v[at + 1];
      at += 2;
      if (kept) continue;
      skipped = true;
      const std::string& name = slots.at(slot).name;
      if (!std::isfinite(grad_norm)) {
        log::get("train")->warn(
            "step {}: non-finite loss or gradient norm ({}) of optimizer '{}'; its update is "
            "skipped; this rank's utterances: {}",
            step.step, grad_norm, name, fmt::join(step.ids, " "));
      } else {
        log::get("train")->warn(
            "step {}: the update of optimizer '{}' (gradient norm {}, learning rate {}) would "
            "make a weight or a moment non-finite; it is undone and skipped; this rank's "
            "utterances: {}",
            step.step, name, grad_norm, outcome.learning_rate, fmt::join(step.ids, " "));
      }
    }
    if (!skipped) {
      bad_steps_in_a_row_ = 0;
      continue;
    }
    ++bad_steps_in_a_row_;
    TTS_CHECK(bad_steps_in_a_row_ < max_bad_steps_,
              "{} steps in a row had non-finite losses or gradients (train.max_bad_steps), the "
              "last step {}; its utterances on rank {}: {}. Check these features (tts-train data "
              "check), lower train.learning_rate or raise train.grad_clip_thresh",
              bad_steps_in_a_row_, step.step, comm_.rank(), fmt::join(step.ids, " "));
  }
}

bool Step::stop_agreed() const {
  bool agreed = stop_wish_ && comm_.size() == 1;
  for (const auto& reducer : reducers_) agreed = agreed || reducer->stop_agreed();
  return agreed;
}

}  // namespace tts::train
