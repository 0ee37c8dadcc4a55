#include "tts/train/trainer.h"

#include <torch/torch.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <optional>

#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/core/logging.h"
#include "tts/core/timer.h"
#include "tts/data/feature_store.h"
#include "tts/data/loader.h"
#include "tts/dist/communicator.h"
#include "tts/dist/gradient_reducer.h"
#include "tts/dist/replicas.h"
#include "tts/model/loss.h"
#include "tts/model/precision.h"
#include "tts/model/tacotron2.h"
#include "tts/text/text_processor.h"
#include "tts/train/checkpoint.h"
#include "tts/train/forward.h"
#include "tts/train/lr_schedule.h"
#include "tts/train/metrics.h"
#include "tts/train/optimizer.h"
#include "tts/train/r_schedule.h"
#include "tts/train/reporting.h"
#include "tts/train/validation.h"
#include "tts/train/warm_start.h"

namespace tts::train {
namespace fs = std::filesystem;
namespace {

std::atomic<bool> g_stop_requested{false};

extern "C" void handle_stop_signal(int) { g_stop_requested = true; }

class Run {
 public:
  Run(const config::Config& config, const TrainArgs& args, dist::Communicator& comm);
  int loop();

 private:
  bool is_root() const { return comm_.rank() == 0; }
  void train_step(std::vector<data::Batch>& micro_batches);
  // What this rank's frame losses and guided-attention loss are scaled by before backward.
  struct LossWeights {
    double frames = 1.0;
    double attention_pairs = 1.0;
  };
  LossWeights loss_weights(const data::Batch& batch) const;
  void set_train_mode();
  void log_interval();
  std::optional<ValidationResult> validate();
  // (Re)builds the train and validation loaders for the phase in force (batch size, r).
  void make_loaders();
  // Gradual training: when train.r_schedule enters a new phase after this step, switches to it;
  // the epoch continues after the same number of utterances. True when it switched.
  bool switch_phase_if_due();
  void save();
  // The step's optional work, after its checkpoint: plots and samples of its validation.
  void side_work_after(const std::optional<ValidationResult>& validation);
  bool agreed_stop();

  const config::Config config_;  // as the user wrote it; the phase in force is state_.phase
  TrainArgs args_;
  dist::Communicator& comm_;
  std::shared_ptr<spdlog::logger> log_ = log::get("train");
  torch::Device device_;
  text::TextProcessor text_;
  data::FeatureStore store_;
  model::Tacotron2 model_{nullptr};
  std::unique_ptr<torch::optim::Adam> optimizer_;
  std::unique_ptr<dist::GradientReducer> reducer_;
  std::unique_ptr<data::Loader> train_loader_;
  std::unique_ptr<data::Loader> val_loader_;
  std::unique_ptr<MetricSink> metrics_;
  TrainingState state_;
  int64_t max_steps_ = 0;
  std::unique_ptr<Validator> validator_;
  IntervalTotals interval_;
  int64_t bad_steps_in_a_row_ = 0;
  Stopwatch run_clock_;
  int64_t first_step_ = 0;
  int64_t last_validated_ = -1;
  int64_t last_saved_ = -1;
  // The last validation's "val" record (rank 0), stored in checkpoints as "val/<name>".
  std::vector<std::pair<std::string, double>> last_val_metrics_;
};

Run::Run(const config::Config& config, const TrainArgs& args, dist::Communicator& comm)
    : config_(config),
      args_(args),
      comm_(comm),
      device_(comm.device()),
      text_(config.text),
      store_(data::FeatureStore::open(args.data_dir, config)) {
  max_steps_ = args.max_steps >= 0 ? args.max_steps : config.train.max_steps;
  dist::check_same_config(config::fingerprint(config), comm_);

  torch::manual_seed(static_cast<uint64_t>(config.train.seed));
  model::apply_math_settings(config.train.tf32, config.train.step_products);
  model::check_precision(config.train.precision, device_);
  model_ = model::build_model(config, text_.num_symbols(), phase_at(config, 0).r);
  model_->to(device_);
  optimizer_ = make_adam(model_->parameters(), adam_settings(config.train));

  if (!args.init_from.empty()) {
    std::string summary = warm_start(*model_, args.init_from, args.init_skip);
    if (is_root()) log_->info("{}", summary);
  }
  if (args.resume) {
    std::string from;
    Checkpoint checkpoint = load_newest_checkpoint(args.run_dir + "/checkpoints", &from);
    restore_model(checkpoint, *model_, from);
    restore_optimizer(checkpoint, *optimizer_);
    restore_rng(checkpoint, device_);
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
  } else {
    state_.continue_with(phase_at(config_, 0), comm_.size());
  }
  model_->set_reduction_factor(state_.phase.r);
  // Every rank starts from rank 0's parameters; ranks other than 0 draw their own dropout masks
  // (rank 0 continues the seeded or restored stream, so a resumed run repeats an uninterrupted
  // one).
  dist::broadcast_parameters(*model_, comm_);
  if (comm_.rank() > 0) {
    torch::manual_seed(
        static_cast<uint64_t>(config.train.seed + 7919 * comm_.rank() + state_.step));
  }

  std::vector<torch::Tensor> parameters = model_->parameters();
  reducer_ = std::make_unique<dist::GradientReducer>(parameters, comm_, config.distributed);
  make_loaders();
  if (is_root() && store_.val().empty()) {
    log_->warn(
        "the store has no validation utterances (data.val_size: 0): the run does not "
        "validate and reports no alignment scores");
  }
  validator_ = std::make_unique<Validator>(config_, device_, comm_, args.run_dir);

  if (is_root()) {
    for (const char* dir : {"/plots", "/samples"}) {
      side_work(fmt::format("creating {}{}", args.run_dir, dir), state_.step,
                [&] { fs::create_directories(args.run_dir + dir); });
    }
    write_file_atomic(args.run_dir + "/config.yaml", config::dump_config(config));
    metrics_ = std::make_unique<MetricSink>(args.run_dir, config.logging.tensorboard);
    log_->info(
        "{} parameters; {} rank(s) on {}; batch {} per rank, global batch {}; {} train and {} "
        "validation utterances; {} steps per epoch",
        model::count_parameters(*model_), comm_.size(), device_.str(), state_.phase.batch_size,
        state_.global_batch(), store_.train().size(), store_.val().size(),
        train_loader_->batches_per_epoch() / config.train.accumulate);
  }
}

void Run::make_loaders() {
  train_loader_.reset();  // its workers stop before the new loader's start
  val_loader_.reset();
  auto tokenizer = [this](const std::string& text) { return text_.to_ids(text); };
  train_loader_ = std::make_unique<data::Loader>(store_, store_.train(), config_, state_.phase,
                                                 tokenizer, comm_.rank(), comm_.size());
  // Without a validation set (data.val_size: 0) the run trains without validating.
  if (store_.val().empty()) return;
  // A validation set smaller than the world is validated whole on every rank.
  bool shard_val = static_cast<int64_t>(store_.val().size()) >= comm_.size();
  val_loader_ =
      std::make_unique<data::Loader>(store_, store_.val(), config_, state_.phase, tokenizer,
                                     shard_val ? comm_.rank() : 0, shard_val ? comm_.size() : 1);
}

bool Run::switch_phase_if_due() {
  const data::Phase next = phase_at(config_, state_.step);
  if (next == state_.phase) return false;
  const int old_r = state_.phase.r;
  state_.continue_with(next, comm_.size());  // as on resuming with another global batch
  model_->set_reduction_factor(next.r);
  make_loaders();
  if (is_root()) {
    log_->info(
        "step {}: r_schedule switches r {} -> {}, batch {} per rank; epoch {} continues at "
        "batch {}",
        state_.step, old_r, next.r, next.batch_size, state_.epoch, state_.batch_in_epoch);
  }
  return true;
}

Run::LossWeights Run::loss_weights(const data::Batch& batch) const {
  // real_frames: the frame losses are means over this rank's real frames and the guided
  // attention loss a mean over its (decoder step, text position) pairs. Weighting each by this
  // rank's share of the global batch's frames or pairs (times the world size, which the reducer
  // divides by) makes the reduced gradient that of the means over the whole global batch: W ranks
  // x B utterances train like 1 rank x W*B. Every rank knows the global counts from the
  // sampler's plan, so this needs no collective.
  // padded_batch (NVIDIA's loss) keeps each rank's own padded-batch means, averaged over the
  // ranks as NVIDIA's DistributedDataParallel does; only guided attention stays global.
  LossWeights weights;
  if (comm_.size() == 1) return weights;
  TTS_CHECK(batch.global_real_frames > 0 && batch.global_attention_pairs > 0,
            "train: a batch without its global batch's counts (not from the loader's plan)");
  const double world = static_cast<double>(comm_.size());
  if (config_.train.loss_normalization == config::LossNormalization::kRealFrames) {
    weights.frames = static_cast<double>(batch.real_frames()) * world /
                     static_cast<double>(batch.global_real_frames);
  }
  weights.attention_pairs = static_cast<double>(batch.attention_pair_count) * world /
                            static_cast<double>(batch.global_attention_pairs);
  return weights;
}

void Run::set_train_mode() {
  model_->train();
  if (!config_.train.freeze_batch_norm) return;
  for (const auto& module : model_->modules()) {
    if (auto* norm = module->as<torch::nn::BatchNorm1dImpl>()) norm->eval();
  }
}

void Run::train_step(std::vector<data::Batch>& micro_batches) {
  Stopwatch step_clock;
  set_train_mode();
  optimizer_->zero_grad();
  std::vector<std::string> ids;
  for (size_t i = 0; i < micro_batches.size(); ++i) {
    data::Batch& batch = micro_batches[i];
    reducer_->begin_step(i + 1 == micro_batches.size());
    Stopwatch clock;
    model::TacotronOutput output;
    model::LossParts loss = forward_loss(*model_, batch, config_.train, &output);
    interval_.phases.forward += clock.seconds();
    clock.reset();
    const LossWeights weights = loss_weights(batch);
    (model::weighted_total(loss, weights.frames, weights.attention_pairs,
                           model::loss_options(config_.train)) /
     static_cast<double>(micro_batches.size()))
        .backward();
    interval_.phases.backward += clock.seconds();
    interval_.losses.add(loss);
    interval_.phases.padded_frames += static_cast<double>(batch.padded_frames());
    interval_.phases.mel_frames += static_cast<double>(batch.real_frames());
    interval_.phases.utterances += static_cast<double>(batch.ids.size());
    ids.insert(ids.end(), batch.ids.begin(), batch.ids.end());
  }
  Stopwatch clock;
  reducer_->finish_step(stop_requested());
  interval_.phases.communication += reducer_->last_exposed_comm_seconds();
  clock.reset();

  std::vector<torch::Tensor> parameters = model_->parameters();
  double grad_norm;
  if (config_.train.grad_clip_thresh > 0) {
    grad_norm = torch::nn::utils::clip_grad_norm_(parameters, config_.train.grad_clip_thresh);
  } else {
    grad_norm = torch::nn::utils::clip_grad_norm_(parameters, INFINITY);
  }
  // The gradients are reduced, so every rank sees the same norm and takes the same decision.
  if (!std::isfinite(grad_norm)) {
    ++bad_steps_in_a_row_;
    log_->warn(
        "step {}: non-finite loss or gradient norm ({}); the step is skipped; this rank's "
        "utterances: {}",
        state_.step + 1, grad_norm, fmt::join(ids, " "));
    TTS_CHECK(bad_steps_in_a_row_ < config_.train.max_bad_steps,
              "{} steps in a row had non-finite losses or gradients (train.max_bad_steps); the "
              "last step's utterances on rank {}: {}. Check these features (tts-train data "
              "check), lower train.learning_rate or raise train.grad_clip_thresh",
              bad_steps_in_a_row_, comm_.rank(), fmt::join(ids, " "));
    optimizer_->zero_grad();
  } else {
    bad_steps_in_a_row_ = 0;
    double lr = learning_rate_at(config_.train, state_.step + 1);
    for (auto& group : optimizer_->param_groups()) {
      static_cast<torch::optim::AdamOptions&>(group.options()).lr(lr);
    }
    optimizer_->step();
    interval_.grad_norm_sum += grad_norm;
  }
  interval_.phases.optimizer += clock.seconds();
  interval_.phases.step += step_clock.seconds();
  interval_.phases.steps += 1;
  ++state_.step;
}

void Run::log_interval() {
  RunProgress progress{max_steps_, state_.step - first_step_, run_clock_.seconds()};
  report_interval(interval_, state_, progress, config_.train, comm_, metrics_.get());
  interval_ = IntervalTotals{};
}

std::optional<ValidationResult> Run::validate() {
  last_validated_ = state_.step;
  if (!val_loader_) return std::nullopt;
  ValidationResult result = validator_->run(*model_, *val_loader_, state_.step, metrics_.get());
  if (!is_root()) return std::nullopt;
  last_val_metrics_.clear();
  for (const auto& [name, value] : result.record.values) {
    if (name != "step") last_val_metrics_.emplace_back("val/" + name, value);
  }
  return result;
}

void Run::side_work_after(const std::optional<ValidationResult>& validation) {
  if (last_validated_ != state_.step && last_saved_ != state_.step) return;
  if (validation) {
    validator_->write_artifacts(*validation, *metrics_);
  }
  // Rank 0 writes the checkpoint and renders plots and samples alone: the others wait for it
  // without a time limit (a slow disk or a long sample must not trip distributed.timeout_s), as
  // long as it is alive.
  comm_.wait_for_all("rank 0's checkpoint and validation artifacts");
}

void Run::save() {
  last_saved_ = state_.step;
  if (!is_root()) return;
  Checkpoint checkpoint = capture(*model_, optimizer_.get(), state_, config::dump_config(config_));
  checkpoint.metrics = last_val_metrics_;
  std::string path =
      save_checkpoint(args_.run_dir + "/checkpoints", checkpoint, config_.train.keep_checkpoints);
  log_->info("checkpoint {}", path);
}

bool Run::agreed_stop() {
  // A signal may reach the ranks at different steps: the wish rode on the step's gradient
  // all-reduce, so every rank stops after the same step.
  return comm_.size() == 1 ? stop_requested() : reducer_->stop_agreed();
}

int Run::loop() {
  first_step_ = state_.step;
  run_clock_.reset();
  const int accumulate = config_.train.accumulate;
  bool stopped = false;
  bool switched = false;
  auto done = [&] { return max_steps_ > 0 && state_.step >= max_steps_; };
  while (!done() && !stopped && state_.epoch < config_.train.max_epochs) {
    switched = false;
    train_loader_->start_epoch(state_.epoch,
                               std::min(state_.batch_in_epoch, train_loader_->batches_per_epoch()));
    std::vector<data::Batch> micro_batches;
    double wait_before = train_loader_->wait_seconds();
    while (!done()) {
      std::optional<data::Batch> batch = train_loader_->next();
      if (batch) {
        micro_batches.push_back(batch->to(device_, true));
        ++state_.batch_in_epoch;
        if (static_cast<int>(micro_batches.size()) < accumulate) continue;
      }
      if (micro_batches.empty()) break;
      interval_.phases.data += train_loader_->wait_seconds() - wait_before;
      train_step(micro_batches);
      micro_batches.clear();
      wait_before = train_loader_->wait_seconds();
      if (state_.step % config_.train.log_interval == 0) log_interval();
      if (config_.distributed.check_replicas_every > 0 &&
          state_.step % config_.distributed.check_replicas_every == 0) {
        dist::check_replicas(*model_, comm_, state_.step);
      }
      // The step's checkpoint is written before its optional work (plots, samples), which may
      // fail without ending the run.
      std::optional<ValidationResult> validation;
      if (state_.step % config_.train.val_interval == 0) validation = validate();
      if (state_.step % config_.train.checkpoint_interval == 0) save();
      side_work_after(validation);
      if (agreed_stop()) {
        stopped = true;
        break;
      }
      if (!done() && switch_phase_if_due()) {
        switched = true;
        break;
      }
      if (!batch) break;
    }
    if (!stopped && !done() && !switched) {
      ++state_.epoch;
      state_.batch_in_epoch = 0;
    }
  }
  if (interval_.phases.steps > 0) log_interval();
  std::optional<ValidationResult> validation;
  if (last_validated_ != state_.step && !stopped) validation = validate();
  if (last_saved_ != state_.step) save();
  side_work_after(validation);
  if (is_root()) {
    metrics_->flush();
    log_->info("{} at step {} (epoch {}) after {}", stopped ? "stopped on request" : "finished",
               state_.step, state_.epoch, format_duration(run_clock_.seconds()));
  }
  return 0;
}

}  // namespace

void install_stop_handlers() {
  std::signal(SIGINT, handle_stop_signal);
  std::signal(SIGTERM, handle_stop_signal);
}

bool stop_requested() { return g_stop_requested.load(); }
void request_stop() { g_stop_requested = true; }

int train(const config::Config& config, const TrainArgs& args, dist::Communicator& comm) {
  Run run(config, args, comm);
  return run.loop();
}

}  // namespace tts::train
