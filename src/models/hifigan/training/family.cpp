#include "tts/models/hifigan/training/family.h"

#include <torch/torch.h>

#include <filesystem>
#include <optional>

#include "tts/audio/compression.h"
#include "tts/checkpoint/checkpoint.h"
#include "tts/checkpoint/warm_start.h"
#include "tts/core/error.h"
#include "tts/core/logging.h"
#include "tts/core/timer.h"
#include "tts/data/feature_store.h"
#include "tts/dist/communicator.h"
#include "tts/formats/torch_file.h"
#include "tts/models/hifigan/conversion/jik876.h"
#include "tts/models/hifigan/training/losses.h"
#include "tts/models/hifigan/training/mel_loss.h"
#include "tts/models/vocoder_validation.h"
#include "tts/models/window_batches.h"
#include "tts/report/metric_names.h"
#include "tts/train/lr_schedule.h"
#include "tts/train/optimizer.h"
#include "tts/train/step.h"

namespace tts::hifigan {

HifiganImpl::HifiganImpl(const config::HifiganOptions& options, int n_mels) {
  generator = register_module("generator", Generator(options, n_mels));
  mpd = register_module("mpd", MultiPeriodDiscriminator(options.discriminator_divisor));
  msd = register_module("msd", MultiScaleDiscriminator(options.discriminator_divisor));
}

namespace {

namespace fs = std::filesystem;

constexpr double kMelLossWeight = 45.0;  // jik876's train.py

// A training window: segment_size samples and their mel frames.
data::SegmentSpec window_spec(const config::Config& config) {
  return models::window_spec(config.audio, config.hifigan.segment_size);
}

// train --init-from a file of jik876's: its generator file g_XXXXXXXX, and the discriminators of
// the do_XXXXXXXX beside it when there is one (else they keep their initialization), checked
// against the run's config; its optimizer states are not taken (a fine-tuning starts afresh).
std::string warm_start_from_jik876(Hifigan& model, const config::Config& config,
                                   const std::string& path, std::vector<std::string> skip) {
  const fs::path g(path);
  const std::string name = g.filename().string();
  std::string do_file;
  if (name.rfind("g_", 0) == 0) {
    const fs::path beside = g.parent_path() / ("do_" + name.substr(2));
    std::error_code ec;
    if (fs::is_regular_file(beside, ec)) do_file = beside.string();
  }
  const HifiganImport imported = import_jik876(path, do_file, "", config);
  if (do_file.empty()) {
    skip.push_back("mpd.");
    skip.push_back("msd.");
  }
  // Under the prefixes of our checkpoint (Note [Exported tensor prefixes], models/roles.h).
  checkpoint::Checkpoint weights;
  for (const auto& [prefix, tensors] :
       {std::pair{"generator.", &imported.generator}, std::pair{"mpd.", &imported.mpd},
        std::pair{"msd.", &imported.msd}}) {
    for (const auto& [name, tensor] : *tensors) {
      weights.tensors.emplace_back(std::string(prefix) + name, tensor);
    }
  }
  const std::string summary =
      checkpoint::warm_start_from(*model, weights, path, "jik876/hifi-gan files", skip);
  return summary + (do_file.empty()
                        ? fmt::format("; no do_{} beside it: the discriminators "
                                      "start as initialized",
                                      name.rfind("g_", 0) == 0 ? name.substr(2) : std::string("*"))
                        : fmt::format("; discriminators from {}", do_file));
}

// Whether `path` is a file of jik876's rather than one of ours: a single file (not a run folder
// or its `latest`) without our checkpoint's format tag.
bool is_jik876_file(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec) || fs::path(path).filename() == "latest") return false;
  if (!fs::is_regular_file(path, ec)) return false;  // load_newest_checkpoint names the problem
  try {
    const formats::PickleValue root = formats::read_torch_file(path);
    return root.find("format") == nullptr && root.find("generator") != nullptr;
  } catch (const Error&) {
    return false;  // not a torch file: load_newest_checkpoint says what it expected
  }
}

std::vector<torch::Tensor> parameters_of(std::initializer_list<torch::nn::Module*> modules) {
  std::vector<torch::Tensor> out;
  for (torch::nn::Module* m : modules) {
    for (const auto& p : m->parameters()) out.push_back(p);
  }
  return out;
}

// Turns off the gradients of `parameters` for a scope: the generator's update back-propagates
// through the discriminators to the generator, and the discriminators' own weight gradients
// would be computed only to be discarded (jik876 computes them; the generator's are the same).
class NoWeightGradients {
 public:
  explicit NoWeightGradients(std::vector<torch::Tensor>& parameters) : parameters_(parameters) {
    for (auto& p : parameters_) p.requires_grad_(false);
  }
  ~NoWeightGradients() {
    for (auto& p : parameters_) p.requires_grad_(true);
  }
  NoWeightGradients(const NoWeightGradients&) = delete;
  NoWeightGradients& operator=(const NoWeightGradients&) = delete;

 private:
  std::vector<torch::Tensor>& parameters_;
};

class HifiganFamily final : public models::WindowFamily {
 public:
  HifiganFamily(const train::FamilyContext& context, std::optional<data::FeatureStore> store)
      : WindowFamily(context, std::move(store), window_spec(context.config), "hifigan"),
        loss_mel_(context.config.audio, context.config.hifigan.fmax_for_loss,
                  context.placement.device) {
    model_ = Hifigan(config_.hifigan, config_.audio.n_mels);
    model_->to(device_);
    // jik876's order: the discriminators' update, then the generator's.
    optimizers_.push_back(train::adam_slot(
        "discriminator", parameters_of({model_->mpd.ptr().get(), model_->msd.ptr().get()}),
        config_.train));
    optimizers_.push_back(
        train::adam_slot("generator", model_->generator->parameters(), config_.train));
  }

  torch::nn::Module& module() override { return *model_; }

  void train_step(std::vector<std::unique_ptr<train::FamilyBatch>>& micro_batches,
                  train::Updates& updates) override {
    model_->train();
    const size_t n = micro_batches.size();
    const double share = 1.0 / static_cast<double>(n);
    std::vector<torch::Tensor> fakes(n), real_mels(n);
    // The discriminators' update, on the generator's output detached (jik876's train.py).
    torch::Tensor disc_total;
    for (size_t i = 0; i < n; ++i) {
      const data::SegmentBatch& batch = static_cast<models::WindowBatch&>(*micro_batches[i]).batch;
      Stopwatch clock;
      fakes[i] = model_->generator->forward(batch.mel);
      real_mels[i] = loss_mel_(batch.audio.squeeze(1));
      torch::Tensor fake = fakes[i].detach();
      DiscriminatorScores f = model_->mpd->forward(batch.audio, fake);
      DiscriminatorScores s = model_->msd->forward(batch.audio, fake);
      torch::Tensor loss = discriminator_loss(s.real, s.fake) + discriminator_loss(f.real, f.fake);
      updates.times().forward += clock.seconds();
      updates.backward(0, loss * share, i + 1 == n);
      disc_total = disc_total.defined() ? disc_total + loss.detach() : loss.detach();
    }
    updates.apply(0);
    // The generator's update through the updated discriminators.
    torch::Tensor gen_total, mel_l1, adversarial, matching;
    {
      NoWeightGradients frozen(optimizers_[0].parameters);
      for (size_t i = 0; i < n; ++i) {
        const data::SegmentBatch& batch =
            static_cast<models::WindowBatch&>(*micro_batches[i]).batch;
        Stopwatch clock;
        torch::Tensor mel = torch::l1_loss(real_mels[i], loss_mel_(fakes[i].squeeze(1)));
        DiscriminatorScores f = model_->mpd->forward(batch.audio, fakes[i]);
        DiscriminatorScores s = model_->msd->forward(batch.audio, fakes[i]);
        torch::Tensor adv = generator_loss(s.fake) + generator_loss(f.fake);
        torch::Tensor fm = feature_loss(s.real_features, s.fake_features) +
                           feature_loss(f.real_features, f.fake_features);
        torch::Tensor loss = adv + fm + kMelLossWeight * mel;
        updates.times().forward += clock.seconds();
        updates.backward(1, loss * share, i + 1 == n);
        fakes[i] = torch::Tensor();  // frees the generator's graph
        auto add = [](torch::Tensor& sum, const torch::Tensor& v) {
          sum = sum.defined() ? sum + v.detach() : v.detach();
        };
        add(gen_total, loss);
        add(mel_l1, mel);
        add(adversarial, adv);
        add(matching, fm);
      }
    }
    updates.apply(1);
    train::LossSums& losses = updates.losses();
    losses.add(report::metric::kLoss, gen_total * share);
    losses.add("discriminator_loss", disc_total * share);
    losses.add("mel_l1", mel_l1 * share);
    losses.add("adversarial_loss", adversarial * share);
    losses.add("feature_matching_loss", matching * share);
  }

  std::unique_ptr<train::ValidationOutcome> validate(int64_t step,
                                                     train::MetricSink* metrics) override {
    if (!store_ || store_->val().empty()) return nullptr;
    const std::vector<data::Utterance>& val = store_->val();
    torch::NoGradGuard no_grad;
    model_->generator->eval();
    double sum = 0;
    double count = 0;
    std::optional<models::VocoderSample> sample;
    for (size_t i : models::validation_share(val.size(), comm_.rank(), comm_.size())) {
      data::WholeUtterance whole = data::read_utterance(val[i], config_.audio.n_mels);
      torch::Tensor mel = whole.mel.unsqueeze(0).to(device_);
      torch::Tensor generated = model_->generator->forward(mel).squeeze(1);
      const int64_t samples = generated.size(1);
      torch::Tensor real = torch::zeros({1, samples});
      const int64_t kept = std::min<int64_t>(samples, whole.waveform.size(0));
      real.narrow(1, 0, kept).copy_(whole.waveform.narrow(0, 0, kept));
      real = real.to(device_);
      sum += torch::l1_loss(loss_mel_(real), loss_mel_(generated)).item<double>();
      count += 1;
      if (comm_.rank() == 0 && i == 0) {
        models::VocoderSample s;
        s.id = val[i].id;
        torch::Tensor cpu = generated[0].to(torch::kCPU).contiguous();
        s.generated.assign(cpu.data_ptr<float>(), cpu.data_ptr<float>() + cpu.numel());
        s.real.assign(whole.waveform.data_ptr<float>(),
                      whole.waveform.data_ptr<float>() + whole.waveform.numel());
        s.stored_mel = whole.mel.t().contiguous();
        sample = std::move(s);
      }
    }
    const auto [mel_l1, all_count] = models::mean_over_ranks(comm_, val.size(), sum, count);
    auto outcome =
        std::make_unique<models::VocoderValidation>(config_, run_dir_, step, std::move(sample));
    outcome->record.add(report::metric::kStep, static_cast<double>(step));
    outcome->record.add(report::metric::kLoss, mel_l1);
    outcome->record.add("mel_l1", mel_l1);
    if (metrics != nullptr) {
      log::get("train")->info("step {}: validation mel L1 {:.4f} over {} utterances", step, mel_l1,
                              static_cast<int64_t>(all_count));
    }
    return outcome;
  }

  std::string warm_start(const std::string& path, const std::vector<std::string>& skip) override {
    if (is_jik876_file(path)) return warm_start_from_jik876(model_, config_, path, skip);
    return checkpoint::warm_start(*model_, path, skip);
  }

  std::string describe() override {
    std::string text =
        fmt::format("HiFi-GAN, generator {} and discriminators {} parameters",
                    train::count_parameters(*model_->generator),
                    train::count_parameters(*model_->mpd) + train::count_parameters(*model_->msd));
    if (store_) {
      text += fmt::format("; {} train and {} validation utterances", store_->train().size(),
                          store_->val().size());
    }
    return text;
  }

 private:
  LossMel loss_mel_;
  Hifigan model_{nullptr};
};

}  // namespace

std::unique_ptr<train::Family> make_family(const train::FamilyContext& context) {
  return std::make_unique<HifiganFamily>(
      context, data::FeatureStore::open(context.data_dir, context.config));
}

train::BenchSubject make_bench(const train::FamilyContext& context,
                               const train::BenchShape& shape) {
  return models::window_bench(std::make_unique<HifiganFamily>(context, std::nullopt),
                              window_spec(context.config), shape, context.config.audio.n_mels,
                              context.placement.device);
}

models::CheckpointSummary summarize_checkpoint(const checkpoint::Checkpoint&,
                                               const config::Config& config) {
  const config::HifiganOptions& h = config.hifigan;
  models::CheckpointSummary summary;
  summary.lines.emplace_back(
      "model", fmt::format("HiFi-GAN, resblock {}, upsample [{}] (hop {}), initial channels {}, "
                           "{} mels",
                           h.resblock, fmt::join(h.upsample_rates, ", "), config.audio.hop_length,
                           h.upsample_initial_channel, config.audio.n_mels));
  summary.json_fields.emplace_back("resblock", fmt::format("\"{}\"", h.resblock));
  return summary;
}

}  // namespace tts::hifigan
