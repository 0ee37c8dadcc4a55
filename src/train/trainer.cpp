#include "tts/train/trainer.h"

#include <torch/torch.h>

#include <atomic>
#include <csignal>

#include "tts/checkpoint/checkpoint.h"
#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/core/logging.h"
#include "tts/core/timer.h"
#include "tts/dist/communicator.h"
#include "tts/dist/replicas.h"
#include "tts/report/metric_names.h"
#include "tts/train/cuda_graph_step.h"
#include "tts/train/freeze.h"
#include "tts/train/metrics.h"
#include "tts/train/precision.h"
#include "tts/train/r_schedule.h"
#include "tts/train/reporting.h"
#include "tts/train/scheduler.h"
#include "tts/train/step.h"

namespace tts::train {
namespace {

std::atomic<bool> g_stop_requested{false};

extern "C" void handle_stop_signal(int) { g_stop_requested = true; }

class Run {
 public:
  Run(const config::Config& config, const TrainArgs& args, dist::Communicator& comm,
      const dist::Placement& placement, const FamilyFactory& make_family);
  int loop();

 private:
  bool is_root() const { return comm_.rank() == 0; }
  void resume();
  // Trains on the rest of the current epoch; returns early when the run is done, stopped or
  // enters a new phase (the epoch then continues in it).
  void train_epoch();
  // The next optimizer step's micro-batches (train.accumulate; fewer at the epoch's end).
  std::vector<std::unique_ptr<FamilyBatch>> next_micro_batches(BatchSource& source,
                                                               bool* epoch_ended);
  // The step's events in order: log, replica check, validation, checkpoint, then the step's
  // optional work (plots, samples), which may fail without ending the run.
  void run_events(Events events);
  // After a validation whose record every rank holds: the best-loss bookkeeping, and whether
  // this step now saves (a new best under train.early_stopping) or the run stops early.
  void note_validation(const ValidationOutcome& validation, Events* events);
  void switch_phase(const data::Phase& next);
  void save();
  bool agreed_stop() const;

  const config::Config config_;  // as the user wrote it; the phase in force is state_.phase
  TrainArgs args_;
  dist::Communicator& comm_;
  std::shared_ptr<spdlog::logger> log_ = log::get("train");
  torch::Device device_;
  std::unique_ptr<Family> family_;
  std::unique_ptr<Step> step_;
  std::unique_ptr<GraphedStep> graphed_step_;  // train.cuda_graphs: step_ replayed from graphs
  std::unique_ptr<MetricSink> metrics_;
  checkpoint::TrainingState state_;
  Scheduler scheduler_;
  IntervalTotals interval_;
  Stopwatch run_clock_;
  int64_t first_step_ = 0;
  bool stopped_ = false;
  bool stopped_early_ = false;  // train.early_stopping ran out of patience
  // The last validation's "val" record (rank 0), stored in checkpoints as "val/<name>".
  std::vector<std::pair<std::string, double>> last_val_metrics_;
};

Run::Run(const config::Config& config, const TrainArgs& args, dist::Communicator& comm,
         const dist::Placement& placement, const FamilyFactory& make_family)
    : config_(config),
      args_(args),
      comm_(comm),
      device_(placement.device),
      scheduler_(config_, args.max_steps >= 0 ? args.max_steps : config.train.max_steps) {
  dist::check_same_config(config::fingerprint(config), comm_);
  if (is_root()) {
    const std::string checkpoints = args.run_dir + "/checkpoints";
    for (const std::string& name : checkpoint::remove_save_temporaries(checkpoints)) {
      log_->info("removed {}/{}, left by a checkpoint save that was killed", checkpoints, name);
    }
  }
  start_process(config, device_);
  family_ = make_family(
      FamilyContext{config_, placement, comm_, args.data_dir, args.run_dir, phase_at(config_, 0)});
  // Before a resumed optimizer state is restored: that state covers the trained parameters.
  const std::string frozen = freeze_parts(*family_, config.train.freeze);
  if (is_root() && !frozen.empty()) log_->info("{}", frozen);
  if (!args.init_from.empty()) {
    std::string summary = family_->warm_start(args.init_from, args.init_skip);
    if (is_root()) log_->info("{}", summary);
  }
  if (args.resume) {
    resume();
  } else {
    state_.continue_with(phase_at(config_, 0), comm_.size());
  }
  // Every rank starts from rank 0's parameters; ranks other than 0 draw their own dropout masks
  // (rank 0 continues the seeded or restored stream, so a resumed run repeats an uninterrupted
  // one).
  dist::broadcast_parameters(family_->module(), comm_);
  if (comm_.rank() > 0) {
    torch::manual_seed(
        static_cast<uint64_t>(config.train.seed + 7919 * comm_.rank() + state_.step));
  }
  step_ = std::make_unique<Step>(*family_, comm_, config.distributed, config.train.max_bad_steps);
  if (config.train.cuda_graphs) {
    graphed_step_ = make_graphed_step(*step_, *family_, config.train, device_);
  }
  family_->set_phase(state_.phase);

  if (is_root()) {
    for (const char* dir : {"/plots", "/samples"}) {
      side_work(fmt::format("creating {}{}", args.run_dir, dir), state_.step,
                [&] { create_folder(args.run_dir + dir); });
    }
    write_file_atomic(args.run_dir + "/config.yaml", config::dump_config(config));
    metrics_ = std::make_unique<MetricSink>(args.run_dir, config.logging.tensorboard);
    log_->info("{}; {} rank(s) on {}; batch {} per rank, global batch {}; {} steps per epoch",
               family_->describe(), comm_.size(), device_.str(), state_.phase.batch_size,
               state_.global_batch(),
               family_->train_batches().batches_per_epoch() / config.train.accumulate);
  }
}

void Run::resume() {
  std::string from;
  checkpoint::Checkpoint checkpoint =
      checkpoint::load_newest_checkpoint(args_.run_dir + "/checkpoints", &from);
  checkpoint::restore_model(checkpoint, family_->module(), from);
  family_->resume_speakers(checkpoint.speakers);
  std::vector<OptimizerSlot>& slots = family_->optimizers();
  for (size_t i = 0; i < slots.size(); ++i) {
    checkpoint::restore_optimizer(checkpoint, i, *slots[i].optimizer);
  }
  checkpoint::restore_rng(checkpoint, device_);
  state_ = checkpoint.state;
  last_val_metrics_ = checkpoint.metrics;
  const int64_t old_world = state_.world_size, old_global = state_.global_batch();
  state_.continue_with(phase_at(config_, state_.step), comm_.size());
  if (old_world != state_.world_size || old_global != state_.global_batch()) {
    log_->info(
        "resuming a {}-rank checkpoint (global batch {}) on {} ranks (global batch {}): epoch "
        "{} continues at batch {}",
        old_world, old_global, state_.world_size, state_.global_batch(), state_.epoch,
        state_.batch_in_epoch);
  }
  if (is_root()) log_->info("resumed from {} at step {}", from, state_.step);
}

void Run::switch_phase(const data::Phase& next) {
  const int old_r = state_.phase.r;
  state_.continue_with(next, comm_.size());  // as on resuming with another global batch
  family_->set_phase(next);
  if (is_root()) {
    log_->info(
        "step {}: r_schedule switches r {} -> {}, batch {} per rank; epoch {} continues at "
        "batch {}",
        state_.step, old_r, next.r, next.batch_size, state_.epoch, state_.batch_in_epoch);
  }
}

void Run::note_validation(const ValidationOutcome& validation, Events* events) {
  double loss = NAN;
  for (const auto& [name, value] : validation.record.values) {
    if (name == report::metric::kLoss) loss = value;
  }
  const bool best = state_.note_validation(loss, state_.step);
  const int patience = config_.train.early_stopping;
  if (patience <= 0) return;
  // The best validation's weights stay on disk (step 0's are --init-from's or the
  // initialization's: no checkpoint is written for them).
  if (best && state_.step > 0) events->save = true;
  if (state_.validations_since_best >= patience) {
    stopped_early_ = true;
    if (is_root()) {
      log_->info(
          "step {}: early stopping: {} validations in a row without a loss below {:.5f}, the "
          "best, of step {} ({}; train.early_stopping)",
          state_.step, state_.validations_since_best, state_.best_val_loss, state_.best_val_step,
          state_.best_val_step > 0 ? fmt::format("checkpoints/step_{:08d}.pt", state_.best_val_step)
                                   : std::string("the model as the run started"));
    }
  }
}

void Run::run_events(Events events) {
  // A read point: what the steps since the last one left on the device (Note [No host reads in
  // a step]); every rank reaches it at the same step.
  if (events.log || events.check_replicas || events.validate || events.save) {
    step_->settle(interval_);
  }
  if (events.log) {
    RunProgress progress{scheduler_.max_steps(), state_.step - first_step_, run_clock_.seconds()};
    std::vector<std::string> names;
    for (const OptimizerSlot& slot : family_->optimizers()) names.push_back(slot.name);
    report_interval(interval_, state_, names, progress, comm_, metrics_.get());
    interval_.reset();
  }
  if (events.check_replicas) dist::check_replicas(family_->module(), comm_, state_.step);
  std::unique_ptr<ValidationOutcome> validation;
  if (events.validate) {
    validation = family_->validate(state_.step, metrics_.get());
    if (validation) note_validation(*validation, &events);
    if (validation && is_root()) {
      side_work("writing the validation metrics", state_.step,
                [&] { metrics_->write(validation->record, state_.step); });
      last_val_metrics_.clear();
      for (const auto& [name, value] : validation->record.values) {
        if (name != "step") last_val_metrics_.emplace_back("val/" + name, value);
      }
    }
  }
  if (events.save) {
    save();
    scheduler_.saved_at(state_.step);
  }
  if (!events.validate && !events.save) return;
  if (validation && is_root()) validation->write_artifacts(*metrics_);
  // Rank 0 writes the checkpoint and renders plots and samples alone: the others wait for it
  // without a time limit (a slow disk or a long sample must not trip distributed.timeout_s), as
  // long as it is alive.
  comm_.wait_for_all("rank 0's checkpoint and validation artifacts");
}

void Run::save() {
  if (!is_root()) return;
  std::vector<torch::optim::Optimizer*> optimizers;
  for (OptimizerSlot& slot : family_->optimizers()) optimizers.push_back(slot.optimizer.get());
  checkpoint::Checkpoint checkpoint =
      checkpoint::capture(family_->module(), optimizers, state_, config::dump_config(config_));
  checkpoint.metrics = last_val_metrics_;
  checkpoint.symbols = family_->input_symbols();
  checkpoint.speakers = family_->speakers();
  std::string path = checkpoint::save_checkpoint(
      args_.run_dir + "/checkpoints", checkpoint, config_.train.keep_checkpoints,
      config_.train.early_stopping > 0 ? state_.best_val_step : -1);
  log_->info("checkpoint {}", path);
}

bool Run::agreed_stop() const {
  // A signal may reach the ranks at different steps: the wish rode on the step's gradient
  // all-reduce, so every rank stops after the same step.
  return comm_.size() == 1 ? stop_requested() : step_->stop_agreed();
}

std::vector<std::unique_ptr<FamilyBatch>> Run::next_micro_batches(BatchSource& source,
                                                                  bool* epoch_ended) {
  std::vector<std::unique_ptr<FamilyBatch>> micro_batches;
  while (static_cast<int>(micro_batches.size()) < config_.train.accumulate) {
    std::unique_ptr<FamilyBatch> batch = source.next();
    if (!batch) {
      *epoch_ended = true;
      break;
    }
    micro_batches.push_back(std::move(batch));
    ++state_.batch_in_epoch;
  }
  return micro_batches;
}

void Run::train_epoch() {
  BatchSource& source = family_->train_batches();
  source.start_epoch(state_.epoch, std::min(state_.batch_in_epoch, source.batches_per_epoch()));
  bool epoch_ended = false;
  while (!epoch_ended) {
    const double wait_before = source.wait_seconds();
    std::vector<std::unique_ptr<FamilyBatch>> micro_batches =
        next_micro_batches(source, &epoch_ended);
    if (micro_batches.empty()) break;
    interval_.times.data += source.wait_seconds() - wait_before;
    if (graphed_step_) {
      graphed_step_->run(micro_batches, state_, interval_, stop_requested());
    } else {
      step_->run(micro_batches, state_, interval_, stop_requested());
    }
    run_events(scheduler_.after_step(state_.step));
    if (stopped_early_) return;
    if (agreed_stop()) {
      stopped_ = true;
      return;
    }
    if (scheduler_.done(state_)) return;
    if (auto next = scheduler_.phase_switch(state_)) {
      switch_phase(*next);
      return;
    }
  }
  ++state_.epoch;
  state_.batch_in_epoch = 0;
}

int Run::loop() {
  first_step_ = state_.step;
  run_clock_.reset();
  if (config_.train.validate_at_start && state_.step == 0) {
    Events start;
    start.validate = true;
    run_events(start);
  }
  while (!stopped_ && !stopped_early_ && !scheduler_.done(state_)) train_epoch();
  run_events(scheduler_.at_end(state_.step, stopped_, interval_.times.steps > 0));
  if (is_root()) {
    metrics_->flush();
    log_->info("{} at step {} (epoch {}) after {}",
               stopped_         ? "stopped on request"
               : stopped_early_ ? "stopped early"
                                : "finished",
               state_.step, state_.epoch, format_duration(run_clock_.seconds()));
  }
  return 0;
}

}  // namespace

void start_process(const config::Config& config, const torch::Device& device) {
  torch::manual_seed(static_cast<uint64_t>(config.train.seed));
  apply_tf32(config.train.tf32);
  check_precision(config.train.precision, device);
}

void install_stop_handlers() {
  std::signal(SIGINT, handle_stop_signal);
  std::signal(SIGTERM, handle_stop_signal);
}

bool stop_requested() { return g_stop_requested.load(); }
void request_stop() { g_stop_requested = true; }

int train(const config::Config& config, const TrainArgs& args, dist::Communicator& comm,
          const dist::Placement& placement, const FamilyFactory& make_family) {
  Run run(config, args, comm, placement, make_family);
  return run.loop();
}

}  // namespace tts::train
