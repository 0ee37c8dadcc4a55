#include "tts/train/trainer.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <optional>

#include "tts/audio/audio_io.h"
#include "tts/audio/audio_processor.h"
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
#include "tts/model/tacotron2.h"
#include "tts/text/text_processor.h"
#include "tts/train/checkpoint.h"
#include "tts/train/lr_schedule.h"
#include "tts/train/metrics.h"
#include "tts/train/png.h"
#include "tts/train/warm_start.h"

namespace tts::train {
namespace fs = std::filesystem;
namespace {

std::atomic<bool> g_stop_requested{false};

extern "C" void handle_stop_signal(int) { g_stop_requested = true; }

// Seconds spent in each phase of a training step, summed over the steps of a log interval.
struct PhaseTimes {
  double data = 0;
  double forward = 0;
  double backward = 0;
  double communication = 0;  // exposed: waiting for all-reduces after backward
  double optimizer = 0;
  double step = 0;
  double padded_frames = 0;
  double mel_frames = 0;
  double utterances = 0;
  double steps = 0;

  std::vector<double> as_vector() const {
    return {data, forward,       backward,   communication, optimizer,
            step, padded_frames, mel_frames, utterances,    steps};
  }
};
constexpr size_t kPhaseCount = 10;

// Sums of loss parts over a log interval.
struct LossSums {
  std::map<std::string, double> sums;
  int64_t count = 0;
  void add(const model::LossParts& parts) {
    auto put = [&](const char* name, const torch::Tensor& t) {
      if (t.defined()) sums[name] += t.item<double>();
    };
    put("loss", parts.total);
    put("mel_loss", parts.mel);
    put("postnet_loss", parts.mel_postnet);
    put("gate_loss", parts.gate);
    put("linear_loss", parts.linear);
    put("guided_attention_loss", parts.guided_attention);
    ++count;
  }
  double mean(const std::string& name) const {
    auto it = sums.find(name);
    return it == sums.end() || count == 0 ? NAN : it->second / static_cast<double>(count);
  }
};

torch::Device choose_device(const config::Config& config) {
  bool cuda = torch::cuda::is_available();
  if (config.train.device == "cuda") {
    TTS_USAGE_CHECK(cuda,
                    "config: train.device = cuda, but no CUDA device is available to this build "
                    "(libtorch {} {}); set train.device: cpu or auto",
                    TORCH_VERSION, cuda ? "with CUDA" : "without CUDA");
  }
  if (config.train.device == "cpu" || !cuda) return torch::Device(torch::kCPU);
  auto local_rank = std::getenv("LOCAL_RANK");
  int index = local_rank ? std::atoi(local_rank) : 0;
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
}

class Run {
 public:
  Run(const config::Config& config, const TrainArgs& args, dist::Communicator& comm);
  int loop();

 private:
  bool is_root() const { return comm_.rank() == 0; }
  void train_step(std::vector<data::Batch>& micro_batches);
  double global_frame_weight(const data::Batch& batch);
  void set_train_mode();
  void log_interval();
  void validate();
  void save();
  bool agreed_stop();
  model::LossParts forward_loss(const data::Batch& batch, model::TacotronOutput* output);

  config::Config config_;
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
  PhaseTimes phases_;
  LossSums losses_;
  double grad_norm_sum_ = 0;
  int64_t bad_steps_in_a_row_ = 0;
  Stopwatch run_clock_;
  int64_t first_step_ = 0;
  int64_t last_validated_ = -1;
  int64_t last_saved_ = -1;
};

Run::Run(const config::Config& config, const TrainArgs& args, dist::Communicator& comm)
    : config_(config),
      args_(args),
      comm_(comm),
      device_(choose_device(config)),
      text_(config.text),
      store_(data::FeatureStore::open(args.data_dir, config)) {
  max_steps_ = args.max_steps >= 0 ? args.max_steps : config.train.max_steps;
  dist::check_same_config(config::fingerprint(config), comm_);

  torch::manual_seed(static_cast<uint64_t>(config.train.seed));
  int64_t n_linear = config.model.predict_linear ? config.audio.n_linear() : 0;
  model_ = model::Tacotron2(config.model, text_.num_symbols(), config.audio.n_mels, n_linear);
  model_->to(device_);
  optimizer_ = std::make_unique<torch::optim::Adam>(
      model_->parameters(), torch::optim::AdamOptions(config.train.learning_rate)
                                .betas({config.train.adam_beta1, config.train.adam_beta2})
                                .eps(config.train.adam_eps)
                                .weight_decay(config.train.weight_decay));

  if (!args.init_from.empty()) {
    std::string summary = warm_start(*model_, args.init_from, args.init_skip);
    if (is_root()) log_->info("{}", summary);
  }
  if (args.resume) {
    std::string from;
    Checkpoint checkpoint = load_newest_checkpoint(args.run_dir + "/checkpoints", &from);
    restore_model(checkpoint, *model_, from);
    restore_optimizer(checkpoint, *optimizer_);
    restore_rng(checkpoint);
    state_ = checkpoint.state;
    // An epoch's global batches depend only on the global batch size (per-rank batch x ranks):
    // with the same global batch the run continues exactly where it stopped, on any number of
    // ranks; with another, it continues after the same number of utterances of the epoch.
    const int64_t old_global =
        std::max<int64_t>(state_.batch_size, 1) * std::max<int64_t>(state_.world_size, 1);
    const int64_t new_global = static_cast<int64_t>(config.train.batch_size) * comm_.size();
    if (old_global != new_global) {
      state_.batch_in_epoch = state_.batch_in_epoch * old_global / new_global;
    }
    if (state_.world_size != comm_.size() || old_global != new_global) {
      log_->info(
          "resuming a {}-rank checkpoint (global batch {}) on {} ranks (global batch {}): epoch "
          "{} continues at batch {}",
          state_.world_size, old_global, comm_.size(), new_global, state_.epoch,
          state_.batch_in_epoch);
    }
    if (is_root()) log_->info("resumed from {} at step {}", from, state_.step);
  }
  // Every rank starts from rank 0's parameters; ranks other than 0 draw their own dropout masks
  // (rank 0 continues the seeded or restored stream, so a resumed run repeats an uninterrupted
  // one).
  dist::broadcast_parameters(*model_, comm_);
  if (comm_.rank() > 0) {
    torch::manual_seed(
        static_cast<uint64_t>(config.train.seed + 7919 * comm_.rank() + state_.step));
  }
  state_.world_size = comm_.size();
  state_.batch_size = config.train.batch_size;

  std::vector<torch::Tensor> parameters = model_->parameters();
  reducer_ = std::make_unique<dist::GradientReducer>(parameters, comm_, config.distributed);
  auto tokenizer = [this](const std::string& text) { return text_.to_ids(text); };
  train_loader_ = std::make_unique<data::Loader>(store_, store_.train(), config_, tokenizer,
                                                 comm_.rank(), comm_.size());
  // A validation set smaller than the world is validated whole on every rank.
  bool shard_val = static_cast<int64_t>(store_.val().size()) >= comm_.size();
  val_loader_ =
      std::make_unique<data::Loader>(store_, store_.val(), config_, tokenizer,
                                     shard_val ? comm_.rank() : 0, shard_val ? comm_.size() : 1);

  if (is_root()) {
    fs::create_directories(args.run_dir + "/plots");
    fs::create_directories(args.run_dir + "/samples");
    write_file_atomic(args.run_dir + "/config.yaml", config::dump_config(config));
    metrics_ = std::make_unique<MetricSink>(args.run_dir, config.logging.tensorboard);
    log_->info(
        "{} parameters; {} rank(s) on {}; batch {} per rank, global batch {}; {} train and {} "
        "validation utterances; {} steps per epoch",
        model::count_parameters(*model_), comm_.size(), device_.str(), config.train.batch_size,
        config.train.batch_size * comm_.size(), store_.train().size(), store_.val().size(),
        train_loader_->batches_per_epoch() / config.train.accumulate);
  }
}

model::LossParts Run::forward_loss(const data::Batch& batch, model::TacotronOutput* output) {
  *output = model_->forward(batch.text, batch.text_lengths, batch.mel, batch.mel_lengths);
  model::Targets targets{batch.mel, batch.mel_lengths, batch.stop, batch.linear};
  return model::compute_loss(*output, targets, batch.text_lengths, config_.train);
}

double Run::global_frame_weight(const data::Batch& batch) {
  // The losses are means over this rank's valid frames. Weighting them by this rank's share of
  // the global batch's frames (times the world size, which the reducer divides by) makes the
  // reduced gradient that of the mean over all frames of the global batch: W ranks x B
  // utterances train like 1 rank x W*B.
  if (comm_.size() == 1) return 1.0;
  double local = static_cast<double>(batch.real_frames());
  std::vector<torch::Tensor> total{torch::full({1}, local, torch::kDouble)};
  comm_.all_reduce_sum(total);
  return local * comm_.size() / std::max(total[0].item<double>(), 1.0);
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
    model::LossParts loss = forward_loss(batch, &output);
    phases_.forward += clock.seconds();
    clock.reset();
    (loss.total * global_frame_weight(batch) / static_cast<double>(micro_batches.size()))
        .backward();
    phases_.backward += clock.seconds();
    losses_.add(loss);
    phases_.padded_frames += static_cast<double>(batch.padded_frames());
    phases_.mel_frames += batch.mel_lengths.sum().item<double>();
    phases_.utterances += static_cast<double>(batch.ids.size());
    ids.insert(ids.end(), batch.ids.begin(), batch.ids.end());
  }
  Stopwatch clock;
  reducer_->finish_step();
  phases_.communication += reducer_->last_exposed_comm_seconds();
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
    grad_norm_sum_ += grad_norm;
  }
  phases_.optimizer += clock.seconds();
  phases_.step += step_clock.seconds();
  phases_.steps += 1;
  ++state_.step;
}

void Run::log_interval() {
  // Every rank contributes its phase times; rank 0 reports the mean and the slowest rank.
  std::vector<double> gathered = comm_.all_gather(phases_.as_vector());
  if (is_root() && phases_.steps > 0) {
    int ranks = comm_.size();
    auto value = [&](int rank, size_t index) { return gathered[rank * kPhaseCount + index]; };
    auto mean = [&](size_t index) {
      double sum = 0;
      for (int r = 0; r < ranks; ++r) sum += value(r, index);
      return sum / ranks;
    };
    auto maximum = [&](size_t index) {
      double best = 0;
      for (int r = 0; r < ranks; ++r) best = std::max(best, value(r, index));
      return best;
    };
    double steps = phases_.steps;
    double step_s = mean(5) / steps;
    double mel_frames_per_s = mean(7) * ranks / std::max(mean(5), 1e-9);
    double lr = learning_rate_at(config_.train, state_.step);
    MetricRecord record{"train", {}};
    record.add("step", static_cast<double>(state_.step));
    record.add("epoch", static_cast<double>(state_.epoch));
    for (const char* name : {"loss", "mel_loss", "postnet_loss", "gate_loss", "linear_loss",
                             "guided_attention_loss"}) {
      double v = losses_.mean(name);
      if (!std::isnan(v) || std::string(name) == "loss") record.add(name, v);
    }
    record.add("grad_norm", grad_norm_sum_ / steps);
    record.add("lr", lr);
    record.add("step_s", step_s);
    record.add("mel_frames_per_s", mel_frames_per_s);
    record.add("utterances_per_s", mean(8) * ranks / std::max(mean(5), 1e-9));
    record.add("data_wait_s", mean(0) / steps);
    record.add("forward_s", mean(1) / steps);
    record.add("backward_s", mean(2) / steps);
    record.add("comm_exposed_s", mean(3) / steps);
    record.add("optimizer_s", mean(4) / steps);
    record.add("rank_spread", maximum(5) / std::max(mean(5), 1e-12));
    record.add("padded_frames_per_rank", mean(6) / steps);
    record.add("padded_frames_imbalance", maximum(6) / std::max(mean(6), 1e-12));
    metrics_->write(record, state_.step);

    std::string eta;
    if (max_steps_ > 0) {
      double per_step = run_clock_.seconds() / static_cast<double>(state_.step - first_step_);
      eta = fmt::format(" | ETA {}",
                        format_duration(per_step * static_cast<double>(max_steps_ - state_.step)));
    }
    log_->info(
        "step {}{} | epoch {} | loss {:.4f} | {:.0f} mel frames/s | {:.3f} s/step (data {:.0f}%, "
        "comm {:.0f}%, spread {:.2f}){}",
        state_.step, max_steps_ > 0 ? fmt::format("/{}", max_steps_) : "", state_.epoch,
        losses_.mean("loss"), mel_frames_per_s, step_s, 100 * mean(0) / std::max(mean(5), 1e-12),
        100 * mean(3) / std::max(mean(5), 1e-12), maximum(5) / std::max(mean(5), 1e-12), eta);
  }
  phases_ = PhaseTimes{};
  losses_ = LossSums{};
  grad_norm_sum_ = 0;
}

void Run::validate() {
  last_validated_ = state_.step;
  // Validation draws prenet dropout masks; training continues with the stream it had, so that
  // when and how often a run validates does not change its parameters.
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  torch::Tensor rng_state = generator.get_state();
  struct RestoreRng {
    at::Generator& generator;
    torch::Tensor state;
    ~RestoreRng() { generator.set_state(state); }
  } restore{generator, rng_state};
  torch::NoGradGuard no_grad;
  model_->eval();
  LossSums sums;
  std::optional<data::Batch> first;
  model::TacotronOutput first_output;
  val_loader_->start_epoch(0);
  while (auto batch = val_loader_->next()) {
    data::Batch on_device = batch->to(device_, false);
    model::TacotronOutput output;
    sums.add(forward_loss(on_device, &output));
    if (!first) {
      first = std::move(on_device);
      first_output = output;
    }
  }
  // Mean over ranks, weighted by the batches each rank validated.
  std::vector<double> gathered =
      comm_.all_gather({sums.count > 0 ? sums.mean("loss") * static_cast<double>(sums.count) : 0.0,
                        static_cast<double>(sums.count)});
  double loss_sum = 0;
  double batches = 0;
  for (size_t r = 0; r < gathered.size(); r += 2) {
    loss_sum += gathered[r];
    batches += gathered[r + 1];
  }
  if (!is_root()) return;
  double val_loss = batches > 0 ? loss_sum / batches : NAN;
  MetricRecord record{"val", {}};
  record.add("step", static_cast<double>(state_.step));
  record.add("loss", val_loss);
  metrics_->write(record, state_.step);
  log_->info("validation at step {}: loss {:.4f} over {} batches", state_.step, val_loss, batches);
  if (!first) return;

  std::string prefix = fmt::format("{}/plots/step_{}", args_.run_dir, state_.step);
  // Teacher-forced alignment of the first validation utterance: [text steps, decoder steps].
  auto alignment = first_output.alignments[0].to(torch::kCPU).to(torch::kFloat);
  int64_t decoder_steps =
      (first->mel_lengths[0].item<int64_t>() + config_.model.n_frames_per_step - 1) /
      config_.model.n_frames_per_step;
  int64_t text_steps = first->text_lengths[0].item<int64_t>();
  alignment = alignment.slice(0, 0, decoder_steps).slice(1, 0, text_steps).t().contiguous();
  std::vector<float> values(alignment.data_ptr<float>(),
                            alignment.data_ptr<float>() + alignment.numel());
  std::string alignment_png =
      heatmap_png(values, static_cast<int>(text_steps), static_cast<int>(decoder_steps), 2);

  // Free-running synthesis of the first utterances: mel plot and Griffin-Lim sample.
  int count = std::min<int64_t>(config_.train.val_inference_utterances, first->text.size(0));
  std::string mel_png;
  if (count > 0) {
    auto text = first->text.slice(0, 0, count);
    auto lengths = first->text_lengths.slice(0, 0, count);
    model::TacotronOutput inferred = model_->infer(text, lengths);
    int64_t frames = inferred.mel_lengths[0].item<int64_t>();
    auto mel = inferred.mel_postnet[0].slice(0, 0, frames).to(torch::kCPU).to(torch::kFloat);
    auto mel_t = mel.t().contiguous();
    std::vector<float> mel_values(mel_t.data_ptr<float>(), mel_t.data_ptr<float>() + mel_t.numel());
    mel_png = heatmap_png(mel_values, static_cast<int>(mel_t.size(0)),
                          static_cast<int>(mel_t.size(1)), 2);
    if (config_.logging.samples) {
      audio::AudioProcessor processor(config_.audio);
      bool linear = inferred.linear.defined();
      auto samples =
          linear ? processor.linear_to_wav(
                       inferred.linear[0].slice(0, 0, frames).to(torch::kCPU).to(torch::kFloat))
                 : processor.mel_to_wav(mel);
      audio::write_wav(fmt::format("{}/samples/step_{}.wav", args_.run_dir, state_.step), samples,
                       config_.audio.sample_rate);
    }
  }
  if (config_.logging.plots) {
    write_file_atomic(prefix + "_alignment.png", alignment_png);
    if (!mel_png.empty()) write_file_atomic(prefix + "_mel.png", mel_png);
  }
  if (EventWriter* events = metrics_->events()) {
    events->add_image("val/alignment", alignment_png, static_cast<int>(decoder_steps) * 2,
                      static_cast<int>(text_steps) * 2, state_.step);
    events->flush();
  }
}

void Run::save() {
  last_saved_ = state_.step;
  if (!is_root()) return;
  std::string path =
      save_checkpoint(args_.run_dir + "/checkpoints",
                      capture(*model_, optimizer_.get(), state_, config::dump_config(config_)),
                      config_.train.keep_checkpoints);
  log_->info("checkpoint {}", path);
}

bool Run::agreed_stop() {
  if (comm_.size() == 1) return stop_requested();
  // A signal may reach the ranks at different steps: they stop together after the same step.
  std::vector<torch::Tensor> flag{torch::full({1}, stop_requested() ? 1.0f : 0.0f)};
  comm_.all_reduce_sum(flag);
  return flag[0].item<float>() > 0;
}

int Run::loop() {
  first_step_ = state_.step;
  run_clock_.reset();
  const int accumulate = config_.train.accumulate;
  bool stopped = false;
  auto done = [&] { return max_steps_ > 0 && state_.step >= max_steps_; };
  while (!done() && !stopped && state_.epoch < config_.train.max_epochs) {
    train_loader_->start_epoch(state_.epoch, state_.batch_in_epoch);
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
      phases_.data += train_loader_->wait_seconds() - wait_before;
      train_step(micro_batches);
      micro_batches.clear();
      wait_before = train_loader_->wait_seconds();
      if (state_.step % config_.train.log_interval == 0) log_interval();
      if (config_.distributed.check_replicas_every > 0 &&
          state_.step % config_.distributed.check_replicas_every == 0) {
        dist::check_replicas(*model_, comm_, state_.step);
      }
      if (state_.step % config_.train.val_interval == 0) validate();
      if (state_.step % config_.train.checkpoint_interval == 0) save();
      if (agreed_stop()) {
        stopped = true;
        break;
      }
      if (!batch) break;
    }
    if (!stopped && !done()) {
      ++state_.epoch;
      state_.batch_in_epoch = 0;
    }
  }
  if (phases_.steps > 0) log_interval();
  if (last_validated_ != state_.step && !stopped) validate();
  if (last_saved_ != state_.step) save();
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
