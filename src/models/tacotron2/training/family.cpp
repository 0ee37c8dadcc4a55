#include "tts/models/tacotron2/training/family.h"

#include <torch/torch.h>

#include <filesystem>
#include <numeric>
#include <optional>

#include "tts/checkpoint/checkpoint.h"
#include "tts/core/frames.h"
#include "tts/core/fs.h"
#include "tts/core/hash.h"
#include "tts/core/logging.h"
#include "tts/core/timer.h"
#include "tts/data/feature_store.h"
#include "tts/data/length_buckets.h"
#include "tts/data/loader.h"
#include "tts/dist/communicator.h"
#include "tts/models/speaker_table.h"
#include "tts/models/tacotron2/conversion/warm_start.h"
#include "tts/models/tacotron2/layers/network.h"
#include "tts/models/tacotron2/training/flops.h"
#include "tts/models/tacotron2/training/teacher_forced.h"
#include "tts/models/tacotron2/training/validation.h"
#include "tts/text/text_processor.h"
#include "tts/train/lr_schedule.h"
#include "tts/train/optimizer.h"
#include "tts/train/step.h"

namespace tts::tacotron2 {
namespace {

// The loader's batches, moved to the rank's device.
class LoaderSource final : public train::BatchSource {
 public:
  LoaderSource(std::unique_ptr<data::Loader> loader, torch::Device device)
      : loader_(std::move(loader)), device_(device) {}
  void start_epoch(int64_t epoch, int64_t skip) override { loader_->start_epoch(epoch, skip); }
  std::unique_ptr<train::FamilyBatch> next() override {
    std::optional<data::Batch> batch = loader_->next();
    if (!batch) return nullptr;
    return std::make_unique<TacotronBatch>(batch->to(device_, true));
  }
  int64_t batches_per_epoch() const override { return loader_->batches_per_epoch(); }
  double wait_seconds() const override { return loader_->wait_seconds(); }
  data::Loader& loader() { return *loader_; }

 private:
  std::unique_ptr<data::Loader> loader_;
  torch::Device device_;
};

class Validation final : public train::ValidationOutcome {
 public:
  Validation(Validator& validator, ValidationResult result)
      : validator_(validator), result_(std::move(result)) {
    record = result_.record;
  }
  void write_artifacts(train::MetricSink& metrics) override {
    validator_.write_artifacts(result_, metrics);
  }

 private:
  Validator& validator_;
  ValidationResult result_;
};

// The speaker table a run from scratch trains with (models/speaker_table.h): the store's speakers
// in name order, for a model with model.speakers rows (at least as many); none for a one-speaker
// model, which says (`log`) that the store's speakers are ignored.
std::vector<std::string> speaker_table(const config::ModelOptions& model,
                                       const data::FeatureStore& store, bool log) {
  if (model.speakers == 0) {
    const size_t count = store.speakers().size();
    if (log && count > 1) {
      log::get("train")->warn(
          "the store has {} speakers, trained as one voice (model.speakers: 0); set "
          "model.speakers: {} (or more) to give each its speaker embedding row",
          count, count);
    }
    return {};
  }
  return models::store_speaker_table(store, model.speakers, "model.speakers");
}

class Tacotron2Family final : public train::Family {
 public:
  Tacotron2Family(const train::FamilyContext& context, int64_t n_symbols,
                  std::optional<data::FeatureStore> store)
      : config_(context.config),
        device_(context.placement.device),
        pin_memory_(context.placement.pin_memory),
        comm_(context.comm),
        run_dir_(context.run_dir),
        text_(context.config.text),
        store_(std::move(store)) {
    model_ = tacotron2::build_model(config_, n_symbols, context.initial_phase.r, device_);
    optimizers_.push_back(train::adam_slot("model", model_->parameters(), config_.train));
    const std::vector<std::string> broken = settings_that_break_the_promises(config_);
    if (comm_.rank() == 0 && !broken.empty() && !context.run_dir.empty()) {
      log::get("train")->warn(
          "under these settings W ranks x B do not train exactly as 1 rank x W*B (docs/"
          "training.md, \"The same result whatever the rank count or a restart\"):\n  {}",
          fmt::join(broken, "\n  "));
    }
    if (store_) {
      speakers_ = speaker_table(config_.model, *store_, comm_.rank() == 0);
      validator_ = std::make_unique<Validator>(config_, device_, comm_, context.run_dir);
      if (comm_.rank() == 0 && store_->val().empty()) {
        log::get("train")->warn(
            "the store has no validation utterances (data.val_size: 0): the run does not "
            "validate and reports no alignment scores");
      }
    }
  }

  torch::nn::Module& module() override { return *model_; }
  std::vector<train::OptimizerSlot>& optimizers() override { return optimizers_; }

  void set_phase(const data::Phase& phase) override {
    model_->set_reduction_factor(phase.r);
    if (!store_) return;
    train_.reset();  // its workers stop before the new loader's start
    val_.reset();
    auto tokenizer = [this](const std::string& text) { return text_.to_ids(text); };
    train_ = std::make_unique<LoaderSource>(
        std::make_unique<data::Loader>(*store_, store_->train(), config_, phase, tokenizer,
                                       comm_.rank(), comm_.size(), pin_memory_, speakers_),
        device_);
    if (config_.train.length_buckets > 0) use_length_buckets(train_->loader());
    // Without a validation set (data.val_size: 0) the run trains without validating.
    if (store_->val().empty()) return;
    // A validation set smaller than the world is validated whole on every rank.
    const bool shard = static_cast<int64_t>(store_->val().size()) >= comm_.size();
    val_ = std::make_unique<data::Loader>(*store_, store_->val(), config_, phase, tokenizer,
                                          shard ? comm_.rank() : 0, shard ? comm_.size() : 1,
                                          pin_memory_, speakers_);
  }

  train::BatchSource& train_batches() override {
    TTS_CHECK(train_ != nullptr, "tacotron2: no batches before set_phase, or without a store");
    return *train_;
  }

  void train_step(std::vector<std::unique_ptr<train::FamilyBatch>>& micro_batches,
                  train::Updates& updates) override {
    set_train_mode();
    const size_t n = micro_batches.size();
    for (size_t i = 0; i < n; ++i) {
      const data::Batch& batch = static_cast<TacotronBatch&>(*micro_batches[i]).batch;
      Stopwatch clock;
      // From device values only (the step, the batch's utterance keys): what a replayed CUDA
      // graph reads afresh.
      const models::KeyedDropout dropout(static_cast<uint64_t>(config_.train.seed),
                                         updates.device_step(), batch.utterance_keys);
      tacotron2::TacotronOutput output;
      tacotron2::LossParts parts =
          forward_loss(*model_, batch, config_.train, &output,
                       training_context(batch, dropout, config_.train, comm_));
      torch::Tensor loss =
          training_loss(parts, batch, comm_.size(), config_.train) / static_cast<double>(n);
      updates.times().forward += clock.seconds();
      updates.backward(0, loss, i + 1 == n);
      add_losses(updates.losses(), parts);
    }
    updates.apply(0);
  }

  std::unique_ptr<train::ValidationOutcome> validate(int64_t step,
                                                     train::MetricSink* metrics) override {
    if (!val_) return nullptr;
    return std::make_unique<Validation>(*validator_,
                                        validator_->run(*model_, *val_, step, metrics));
  }

  std::string warm_start(const std::string& path, const std::vector<std::string>& skip) override {
    return tacotron2::warm_start(*model_, path, skip, input_symbols(), speakers_);
  }

  std::vector<std::string> input_symbols() const override {
    return text::symbol_table(config_.text.symbol_set);
  }

  std::vector<std::string> speakers() const override { return speakers_; }

  void resume_speakers(const std::vector<std::string>& table) override {
    if (config_.model.speakers == 0) return;
    speakers_ =
        models::resumed_speaker_table(table, speakers_, config_.model.speakers, "model.speakers");
  }

  // Note [Replaying a training step]: met. The per-step inputs are the static buffers (the
  // batch, Batch::counts that weight the losses, Batch::utterance_keys), Step's learning rates
  // and Updates::device_step (the dropout keys); the losses go into LossSums in place; under
  // train.cuda_graphs the encoder's LSTM and the CBHG's GRU run masked over the padded length
  // (recurrence_paths: no lengths read on the host, no packing to repeat); and a batch's static
  // shape carries its r (data::BatchShape), so each r_schedule row gets graphs of its own.
  std::string replay_blocker() const override { return {}; }

  std::string describe() override {
    std::string text = fmt::format("Tacotron-2, {} parameters", train::count_parameters(*model_));
    if (store_) {
      text += fmt::format("; {} train and {} validation utterances", store_->train().size(),
                          store_->val().size());
    }
    if (!speakers_.empty()) {
      text += fmt::format("; {} of {} speaker rows used", speakers_.size(), config_.model.speakers);
    }
    return text;
  }

 private:
  // train.length_buckets: the ladder is made once, from the training set, when the run starts;
  // every phase pads to it (its frame boundaries are multiples of every r). Rank 0 records it in
  // RUN/length_buckets.txt; a resumed run checks that its store gives the recorded ladder (it
  // does unless the training set changed, which the sampler's plan would not survive either).
  void use_length_buckets(data::Loader& loader) {
    if (buckets_.empty()) {
      // Every r the run uses: model.n_frames_per_step, or (which then replaces it) each of
      // train.r_schedule's.
      int64_t multiple = config_.train.r_schedule.empty() ? config_.model.n_frames_per_step : 1;
      for (const config::RScheduleRow& row : config_.train.r_schedule) {
        multiple = std::lcm(multiple, static_cast<int64_t>(row.r));
      }
      std::vector<int64_t> frames;
      for (const data::Utterance& u : loader.utterances()) frames.push_back(u.n_frames);
      buckets_ = data::make_length_buckets(loader.text_lengths(), frames,
                                           config_.train.length_buckets, multiple);
      record_length_buckets();
    }
    loader.set_length_buckets(buckets_);
    if (comm_.rank() != 0 || run_dir_.empty()) return;
    const data::BatchStats plain = loader.padding_report(0, {});
    const data::BatchStats bucketed = loader.padding_report(0, buckets_);
    log::get("train")->info(
        "length buckets: {}; padding is {:.1f}% of mel frames ({:.1f}% without buckets) and "
        "{:.1f}% of text positions ({:.1f}%) in epoch 0",
        buckets_.describe(), 100 * bucketed.padding_fraction, 100 * plain.padding_fraction,
        100 * bucketed.text_padding_fraction, 100 * plain.text_padding_fraction);
  }

  void record_length_buckets() {
    if (comm_.rank() != 0 || run_dir_.empty()) return;
    const std::string path = run_dir_ + "/length_buckets.txt";
    // symlink_status: a link (even a dangling one) is read, and refused, not written through.
    if (std::filesystem::exists(std::filesystem::symlink_status(path))) {
      const data::LengthBuckets recorded = data::LengthBuckets::read(path);
      TTS_CHECK(recorded == buckets_,
                "train.length_buckets: the run recorded {} in {}, but the store now gives {}: "
                "its training set changed; resume with the store the run started with, or "
                "start a new run",
                recorded.describe(), path, buckets_.describe());
      return;
    }
    write_file_atomic(path, buckets_.format());
  }

  void set_train_mode() {
    model_->train();
    if (!config_.train.freeze_batch_norm) return;
    for (const auto& module : model_->modules()) {
      if (auto* norm = module->as<torch::nn::BatchNorm1dImpl>()) norm->eval();
    }
  }

  const config::Config& config_;
  torch::Device device_;
  bool pin_memory_;
  dist::Communicator& comm_;
  std::string run_dir_;
  data::LengthBuckets buckets_;  // train.length_buckets, once made
  text::TextProcessor text_;
  std::optional<data::FeatureStore> store_;
  // The model's speaker table: names in row order (none for a one-speaker model).
  std::vector<std::string> speakers_;
  tacotron2::Tacotron2 model_{nullptr};
  std::vector<train::OptimizerSlot> optimizers_;
  std::unique_ptr<LoaderSource> train_;
  std::unique_ptr<data::Loader> val_;
  std::unique_ptr<Validator> validator_;
};

// A teacher-forced batch of `batch` utterances of `text_len` symbols (ids drawn from
// 1..n_symbols-1) and `frames` mel frames (a multiple of r), on `device`: bench's input.
data::Batch synthetic_batch(const config::Config& config, int64_t batch, int64_t text_len,
                            int64_t frames, int64_t n_symbols, const torch::Device& device) {
  const int64_t n_mels = config.audio.n_mels;
  const int64_t n_linear = config.audio.n_linear();
  auto floats = torch::TensorOptions().device(device);
  data::Batch out;
  out.text = torch::randint(1, n_symbols, {batch, text_len}, floats.dtype(torch::kInt64));
  out.text_lengths = torch::full({batch}, text_len, torch::kInt64).to(device);
  out.mel = torch::randn({batch, frames, n_mels}, floats);
  out.mel_lengths = torch::full({batch}, frames, torch::kInt64).to(device);
  out.stop = torch::zeros({batch, frames}, floats);
  out.stop.select(1, frames - 1).fill_(1);
  if (config.model.predict_linear) out.linear = torch::randn({batch, frames, n_linear}, floats);
  if (config.model.speakers > 0) {
    out.speakers = torch::randint(0, config.model.speakers, {batch}, floats.dtype(torch::kInt64));
  }
  std::vector<int64_t> keys;
  for (int64_t i = 0; i < batch; ++i) {
    out.ids.push_back(fmt::format("synthetic_{}", i));
    keys.push_back(utterance_key(out.ids.back()));
  }
  out.utterance_keys = torch::tensor(keys, torch::kInt64).to(device);
  out.text_length_values.assign(static_cast<size_t>(batch), text_len);
  out.mel_length_values.assign(static_cast<size_t>(batch), frames);
  out.real_frame_count = batch * frames;
  out.r = config.model.n_frames_per_step;
  return out;
}

}  // namespace

std::unique_ptr<train::Family> make_family(const train::FamilyContext& context) {
  text::TextProcessor text(context.config.text);
  return std::make_unique<Tacotron2Family>(
      context, text.num_symbols(), data::FeatureStore::open(context.data_dir, context.config));
}

train::BenchSubject make_bench(const train::FamilyContext& context,
                               const train::BenchShape& shape) {
  const config::Config& config = context.config;
  const int r = config.model.n_frames_per_step;
  train::BenchSubject subject;
  subject.phase = data::Phase{r, static_cast<int>(shape.batch)};
  subject.frames = padded_frames(shape.frames > 0 ? shape.frames : 600, r);
  subject.text_len = shape.text_len;
  subject.fields = {
      {"frames_per_step", std::to_string(r)},
      {"recurrent_products", fmt::format("{}", config.model.recurrent_products), true},
      {"decoder_step",
       fmt::format(
           "{}", tacotron2::decoder_step_for(config.model.decoder_step, context.placement.device)),
       true}};
  train::FamilyContext own{config, context.placement, context.comm, "", "", subject.phase};
  subject.family = std::make_unique<Tacotron2Family>(own, shape.symbols, std::nullopt);
  subject.family->set_phase(subject.phase);
  subject.batch = std::make_unique<TacotronBatch>(
      synthetic_batch(config, shape.batch, shape.text_len, subject.frames, shape.symbols,
                      context.placement.device));
  const int64_t n_linear = config.model.predict_linear ? config.audio.n_linear() : 0;
  subject.step_gflop =
      tacotron2::count_step_flops(config.model,
                                  tacotron2::StepShape{shape.batch, shape.text_len, subject.frames,
                                                       config.audio.n_mels, n_linear})
          .training() /
      1e9;
  return subject;
}

models::CheckpointSummary summarize_checkpoint(const checkpoint::Checkpoint& checkpoint,
                                               const config::Config& config) {
  const int r = checkpoint::checkpoint_phase(checkpoint, config).r;  // in force when written
  const config::ModelOptions& m = config.model;
  models::CheckpointSummary summary;
  summary.lines.emplace_back(
      "model",
      fmt::format("Tacotron-2, r={}, encoder {}, decoder {}, attention {}, postnet {}x{}{}", r,
                  m.encoder_embedding_dim, m.decoder_rnn_dim, m.attention_dim,
                  m.postnet_n_convolutions, m.postnet_embedding_dim,
                  m.predict_linear ? ", linear CBHG head" : ""));
  summary.json_fields.emplace_back("r", std::to_string(r));
  return summary;
}

}  // namespace tts::tacotron2
