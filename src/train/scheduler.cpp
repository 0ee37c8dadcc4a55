#include "tts/train/scheduler.h"

#include "tts/train/r_schedule.h"

namespace tts::train {

Scheduler::Scheduler(const config::Config& config, int64_t max_steps)
    : config_(config), max_steps_(max_steps) {}

bool Scheduler::done(const checkpoint::TrainingState& state) const {
  return (max_steps_ > 0 && state.step >= max_steps_) || state.epoch >= config_.train.max_epochs;
}

Events Scheduler::after_step(int64_t step) {
  const config::TrainOptions& train = config_.train;
  const int64_t replicas = config_.distributed.check_replicas_every;
  Events events;
  events.log = step % train.log_interval == 0;
  events.check_replicas = replicas > 0 && step % replicas == 0;
  events.validate = step % train.val_interval == 0;
  events.save = step % train.checkpoint_interval == 0;
  if (events.validate) last_validated_ = step;
  if (events.save) last_saved_ = step;
  return events;
}

Events Scheduler::at_end(int64_t step, bool stopped, bool unlogged_steps) {
  Events events;
  events.log = unlogged_steps;
  events.validate = last_validated_ != step && !stopped;
  events.save = last_saved_ != step;
  if (events.validate) last_validated_ = step;
  if (events.save) last_saved_ = step;
  return events;
}

std::optional<data::Phase> Scheduler::phase_switch(const checkpoint::TrainingState& state) const {
  const data::Phase next = phase_at(config_, state.step);
  if (next == state.phase) return std::nullopt;
  return next;
}

}  // namespace tts::train
