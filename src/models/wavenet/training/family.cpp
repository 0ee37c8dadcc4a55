#include "tts/models/wavenet/training/family.h"

#include <torch/torch.h>

#include <algorithm>
#include <optional>

#include "tts/checkpoint/checkpoint.h"
#include "tts/checkpoint/warm_start.h"
#include "tts/core/error.h"
#include "tts/core/logging.h"
#include "tts/core/timer.h"
#include "tts/data/feature_store.h"
#include "tts/data/segments.h"
#include "tts/dist/communicator.h"
#include "tts/models/speaker_table.h"
#include "tts/models/vocoder_validation.h"
#include "tts/models/wavenet/layers/mixture.h"
#include "tts/models/wavenet/speaking/generate.h"
#include "tts/models/window_batches.h"
#include "tts/report/metric_names.h"
#include "tts/train/lr_schedule.h"
#include "tts/train/optimizer.h"
#include "tts/train/step.h"

namespace tts::wavenet {

WavenetTrainingImpl::WavenetTrainingImpl(const config::WavenetOptions& options, int64_t n_mels) {
  wavenet = register_module("wavenet", WaveNet(options, n_mels));
  if (!options.exponential_moving_average) return;
  ema = register_module("ema", WaveNet(options, n_mels));
  torch::NoGradGuard no_grad;
  auto trained = wavenet->named_parameters();
  for (auto& item : ema->named_parameters()) {
    item.value().copy_(trained[item.key()]);  // r9y9 registers the average at the weights
    item.value().requires_grad_(false);
  }
}

void WavenetTrainingImpl::update_average(double decay) {
  if (!ema) return;
  torch::NoGradGuard no_grad;
  auto trained = wavenet->named_parameters();
  for (auto& item : ema->named_parameters()) {
    torch::Tensor& average = item.value();
    average.sub_((average - trained[item.key()]) * (1.0 - decay));
  }
}

namespace {

// A training window: max_time_steps samples, their mel frames and cin_pad frames each side.
data::SegmentSpec window_spec(const config::Config& config) {
  return models::window_spec(config.audio, config.wavenet.max_time_steps, config.wavenet.cin_pad);
}

// One utterance's first training window (from frame 0): mel [1, n_mels, frames + 2 cin_pad],
// audio [1, 1, frames * hop].
std::pair<torch::Tensor, torch::Tensor> first_window(const data::Utterance& u,
                                                     const data::SegmentSpec& spec,
                                                     int64_t n_mels) {
  torch::Tensor mel = torch::empty({1, n_mels, spec.frames + 2 * spec.context});
  torch::Tensor audio = torch::empty({1, 1, spec.frames * spec.hop});
  data::read_window(u, 0, spec, n_mels, mel.data_ptr<float>(), audio.data_ptr<float>());
  return {mel, audio};
}

// The speaker table a run from scratch trains with (models/speaker_table.h): the store's speakers
// in name order for a network with a speaker embedding (wavenet.gin_channels > 0); none for one
// without, which says (`log`) that the store's speakers are trained as one voice.
std::vector<std::string> speaker_table(const config::WavenetOptions& options,
                                       const data::FeatureStore& store, bool log) {
  if (options.gin_channels <= 0) {
    if (log && store.speakers().size() > 1) {
      log::get("train")->warn(
          "the store has {} speakers, trained as one voice (wavenet.gin_channels: {}); set "
          "wavenet.gin_channels (e.g. 16) and wavenet.n_speakers: {} (or more) to condition on "
          "the speaker",
          store.speakers().size(), options.gin_channels, store.speakers().size());
    }
    return {};
  }
  TTS_USAGE_CHECK(options.use_speaker_embedding,
                  "wavenet.gin_channels is {} with wavenet.use_speaker_embedding: false: that "
                  "network takes speaker features, which a feature store does not keep; set "
                  "wavenet.use_speaker_embedding: true to train a speaker embedding",
                  options.gin_channels);
  return models::store_speaker_table(store, options.n_speakers, "wavenet.n_speakers");
}

class WavenetFamily final : public models::WindowFamily {
 public:
  WavenetFamily(const train::FamilyContext& context, std::optional<data::FeatureStore> store)
      : WindowFamily(context, std::move(store), window_spec(context.config), "wavenet") {
    if (store_) speakers_ = speaker_table(config_.wavenet, *store_, comm_.rank() == 0);
    model_ = WavenetTraining(config_.wavenet, config_.audio.n_mels);
    model_->to(device_);
    optimizers_.push_back(train::adam_slot("model", model_->wavenet->parameters(), config_.train));
  }

  torch::nn::Module& module() override { return *model_; }

  void train_step(std::vector<std::unique_ptr<train::FamilyBatch>>& micro_batches,
                  train::Updates& updates) override {
    model_->wavenet->train();
    const size_t n = micro_batches.size();
    const double share = 1.0 / static_cast<double>(n);
    torch::Tensor total;
    for (size_t i = 0; i < n; ++i) {
      const data::SegmentBatch& batch = static_cast<models::WindowBatch&>(*micro_batches[i]).batch;
      Stopwatch clock;
      torch::Tensor y_hat = model_->wavenet->forward(batch.audio, batch.mel, batch.speakers);
      torch::Tensor loss = teacher_forced_loss(y_hat, batch.audio, config_.wavenet);
      updates.times().forward += clock.seconds();
      updates.backward(0, loss * share, i + 1 == n);
      total = total.defined() ? total + loss.detach() : loss.detach();
    }
    updates.apply(0);
    model_->update_average(config_.wavenet.ema_decay);
    updates.losses().add(report::metric::kLoss, total * share);
  }

  std::unique_ptr<train::ValidationOutcome> validate(int64_t step,
                                                     train::MetricSink* metrics) override {
    if (!store_ || store_->val().empty()) return nullptr;
    const std::vector<data::Utterance>& val = store_->val();
    torch::NoGradGuard no_grad;
    WaveNet& net = model_->synthesis_network();
    const bool was_training = net->is_training();
    net->eval();
    double sum = 0;
    double count = 0;
    std::optional<models::VocoderSample> sample;
    const int64_t n_mels = config_.audio.n_mels;
    for (size_t i : models::validation_share(val.size(), comm_.rank(), comm_.size())) {
      auto [mel, audio] = first_window(val[i], spec_, n_mels);
      const torch::Tensor speaker = speaker_of(val[i]);  // on the network's device
      torch::Tensor y_hat = net->forward(audio.to(device_), mel.to(device_), speaker);
      const double predicted = static_cast<double>(audio.size(2) - 1);
      sum +=
          teacher_forced_loss(y_hat, audio.to(device_), config_.wavenet).item<double>() * predicted;
      count += predicted;
      if (comm_.rank() == 0 && i == 0) {
        // What the vocoder makes of the window's mel, sampled with the run's seed (a generator
        // of its own: the training streams are untouched).
        torch::Tensor generated =
            generate(net, mel, static_cast<uint64_t>(config_.train.seed), speaker).reshape({-1});
        models::VocoderSample s;
        s.id = val[i].id;
        s.generated.assign(generated.data_ptr<float>(),
                           generated.data_ptr<float>() + generated.numel());
        torch::Tensor real = audio.reshape({-1}).contiguous();
        s.real.assign(real.data_ptr<float>(), real.data_ptr<float>() + real.numel());
        s.stored_mel =
            mel[0].narrow(1, spec_.context, spec_.frames).t().contiguous();  // [frames, n_mels]
        sample = std::move(s);
      }
    }
    if (was_training) net->train();
    const double nll = models::mean_over_ranks(comm_, val.size(), sum, count).first;
    auto outcome =
        std::make_unique<models::VocoderValidation>(config_, run_dir_, step, std::move(sample));
    outcome->record.add(report::metric::kStep, static_cast<double>(step));
    outcome->record.add(report::metric::kLoss, nll);
    if (metrics != nullptr) {
      log::get("train")->info(
          "step {}: validation NLL {:.4f} per sample ({} weights, the first {} samples of each "
          "of {} utterances)",
          step, nll, model_->ema ? "averaged" : "trained", spec_.frames * spec_.hop, val.size());
    }
    return outcome;
  }

  // A checkpoint with a speaker table gives each of the model's speakers its row by name (rows of
  // speakers it lacks keep their initialization, as r9y9 initializes them); one without (a
  // one-speaker model, or an import of r9y9's files: Note [r9y9's speaker rows]) gives its rows
  // as they are.
  std::string warm_start(const std::string& path, const std::vector<std::string>& skip) override {
    std::string source;
    const checkpoint::Checkpoint from = checkpoint::load_newest_checkpoint(path, &source);
    checkpoint::checkpoint_config(from, source);  // a checkpoint is whole only with a sound config
    const bool by_name = !speakers_.empty() && !from.speakers.empty();
    std::vector<std::string> skipped = skip;
    if (by_name) skipped.insert(skipped.end(), {"wavenet.embed_speakers.", "ema.embed_speakers."});
    std::string summary =
        checkpoint::warm_start_from(*model_, from, source, "tts-train checkpoint", skipped);
    if (by_name) summary += copy_speaker_rows(from, skip);
    return summary;
  }

  std::vector<std::string> speakers() const override { return speakers_; }

  void resume_speakers(const std::vector<std::string>& table) override {
    if (config_.wavenet.gin_channels <= 0) return;
    speakers_ = models::resumed_speaker_table(table, speakers_, config_.wavenet.n_speakers,
                                              "wavenet.n_speakers");
  }

  std::string describe() override {
    std::string text = fmt::format(
        "WaveNet, {} parameters, receptive field {} samples{}",
        train::count_parameters(*model_->wavenet), model_->wavenet->receptive_field(),
        model_->ema ? fmt::format(", moving average kept (decay {})", config_.wavenet.ema_decay)
                    : "");
    if (store_) {
      text += fmt::format("; {} train and {} validation utterances", store_->train().size(),
                          store_->val().size());
    }
    if (!speakers_.empty()) {
      text +=
          fmt::format("; {} of {} speaker rows used", speakers_.size(), config_.wavenet.n_speakers);
    }
    return text;
  }

 private:
  // Copies the rows of `from`'s speaker embeddings (trained and averaged) into the model's by
  // speaker name, except under a prefix of `skip`; returns what the log says of it.
  std::string copy_speaker_rows(const checkpoint::Checkpoint& from,
                                const std::vector<std::string>& skip) {
    torch::NoGradGuard no_grad;
    std::vector<std::string> fresh;
    for (const std::string& name : speakers_) {
      if (std::find(from.speakers.begin(), from.speakers.end(), name) == from.speakers.end()) {
        fresh.push_back(name);
      }
    }
    int64_t copied = 0;
    for (WaveNet* net : {&model_->wavenet, &model_->ema}) {
      if (!*net || !(*net)->embed_speakers) continue;
      const std::string key =
          std::string(net == &model_->wavenet ? "wavenet." : "ema.") + "embed_speakers.weight";
      bool skip_it = false;
      for (const std::string& prefix : skip) skip_it = skip_it || key.rfind(prefix, 0) == 0;
      const auto found = std::find_if(from.tensors.begin(), from.tensors.end(),
                                      [&](const auto& item) { return item.first == key; });
      if (skip_it || found == from.tensors.end()) continue;
      const torch::Tensor& rows = found->second;
      torch::Tensor& into = (*net)->embed_speakers->weight;
      TTS_USAGE_CHECK(rows.dim() == 2 && rows.size(1) == into.size(1) &&
                          rows.size(0) >= static_cast<int64_t>(from.speakers.size()),
                      "--init-from: the checkpoint's {} is [{}] for {} speakers; the model's rows "
                      "have {} values (wavenet.gin_channels): make them equal, or leave the rows "
                      "initialized: --init-skip {}",
                      key, fmt::join(rows.sizes(), ", "), from.speakers.size(), into.size(1), key);
      for (size_t row = 0; row < speakers_.size(); ++row) {
        const auto at = std::find(from.speakers.begin(), from.speakers.end(), speakers_[row]);
        if (at == from.speakers.end()) continue;
        into[static_cast<int64_t>(row)].copy_(rows[at - from.speakers.begin()]);
      }
      ++copied;
    }
    if (copied == 0) return "";
    return fmt::format(
        "; speaker embedding remapped by speaker ({} of the model's {} speakers copied from the "
        "checkpoint's {}; new, as initialized: {})",
        speakers_.size() - fresh.size(), speakers_.size(), from.speakers.size(),
        fresh.empty() ? std::string("none") : fmt::format("{}", fmt::join(fresh, ", ")));
  }

  // Utterance `u`'s row of the speaker table as speaker ids [1]; undefined for a one-speaker
  // model.
  torch::Tensor speaker_of(const data::Utterance& u) const {
    if (speakers_.empty()) return {};
    const auto found = std::find(speakers_.begin(), speakers_.end(), u.speaker);
    TTS_CHECK(found != speakers_.end(),
              "utterance {}: its speaker '{}' is not in the model's speaker table ({} speakers: "
              "{})",
              u.id, u.speaker, speakers_.size(), fmt::join(speakers_, ", "));
    return torch::full({1}, static_cast<int64_t>(found - speakers_.begin()),
                       torch::TensorOptions().dtype(torch::kInt64).device(device_));
  }

  WavenetTraining model_{nullptr};
};

}  // namespace

std::unique_ptr<train::Family> make_family(const train::FamilyContext& context) {
  return std::make_unique<WavenetFamily>(
      context, data::FeatureStore::open(context.data_dir, context.config));
}

train::BenchSubject make_bench(const train::FamilyContext& context,
                               const train::BenchShape& shape) {
  train::BenchSubject subject = models::window_bench(
      std::make_unique<WavenetFamily>(context, std::nullopt), window_spec(context.config), shape,
      context.config.audio.n_mels, context.placement.device);
  if (context.config.wavenet.gin_channels > 0) {  // every window the first speaker's
    data::SegmentBatch& batch = static_cast<models::WindowBatch&>(*subject.batch).batch;
    batch.speakers =
        torch::zeros({batch.size()},
                     torch::TensorOptions().dtype(torch::kInt64).device(context.placement.device));
  }
  return subject;
}

std::map<std::string, torch::Tensor> synthesis_tensors(const checkpoint::Checkpoint& checkpoint) {
  std::map<std::string, torch::Tensor> tensors =
      checkpoint::tensors_with_prefix(checkpoint, "ema.");
  if (tensors.empty()) tensors = checkpoint::tensors_with_prefix(checkpoint, "wavenet.");
  TTS_CHECK(!tensors.empty(), "the checkpoint holds no wavenet.* or ema.* tensors");
  return tensors;
}

checkpoint::Checkpoint checkpoint_from_r9y9(const WavenetImport& imported,
                                            const config::Config& config) {
  TTS_USAGE_CHECK(config.model.kind == config::ModelKind::kWavenet,
                  "wavenet import: the config's model.kind is {}, not wavenet", config.model.kind);
  torch::manual_seed(config.train.seed);
  WavenetTraining model(config.wavenet, config.audio.n_mels);
  load_wavenet_state_dict(*model->wavenet, imported.tensors, "the r9y9 checkpoint");
  if (model->ema) load_wavenet_state_dict(*model->ema, imported.tensors, "the r9y9 checkpoint");
  checkpoint::TrainingState state;
  state.step = imported.global_step;
  state.phase.batch_size = config.train.batch_size;
  return checkpoint::capture(*model, {}, state, config::dump_config(config));
}

models::CheckpointSummary summarize_checkpoint(const checkpoint::Checkpoint& checkpoint,
                                               const config::Config& config) {
  const config::WavenetOptions& w = config.wavenet;
  const bool averaged = !checkpoint::tensors_with_prefix(checkpoint, "ema.").empty();
  models::CheckpointSummary summary;
  summary.lines.emplace_back(
      "model",
      fmt::format("WaveNet, {} layers in {} stacks, kernel {}, channels residual {} / gate {} / "
                  "skip {}, {} output ({} channels), upsample [{}] (hop {}), cin_pad {}, {} mels",
                  w.layers, w.stacks, w.kernel_size, w.residual_channels, w.gate_channels,
                  w.skip_out_channels, w.output_distribution, w.out_channels,
                  fmt::join(w.upsample_scales, ", "), config.audio.hop_length, w.cin_pad,
                  config.audio.n_mels));
  summary.lines.emplace_back(
      "weights", averaged
                     ? fmt::format("moving average kept (decay {}): synthesis uses it", w.ema_decay)
                     : std::string("trained weights only (no moving average)"));
  summary.json_fields.emplace_back("moving_average", averaged ? "true" : "false");
  return summary;
}

}  // namespace tts::wavenet
