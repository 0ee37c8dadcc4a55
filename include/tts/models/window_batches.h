// The batches of a vocoder family (HiFi-GAN, WaveNet): windows of stored waveforms with their mels
// (data/segments.h) as the trainer core sees them, loaded ahead and moved to the rank's device.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tts/data/feature_store.h"
#include "tts/data/segments.h"
#include "tts/models/registry.h"
#include "tts/train/family.h"

namespace tts::models {

// Note [Silent-mel floor]: a vocoder's training window may run past its utterance's last frame
// (a window is cut at random, whole frames of mel beside frames * hop samples); the frames past
// the end hold the value a mel of silence has under the config's compression (log of the clamp
// floor), not zero, which is a loud frame after log compression. The audio there is zero.
// data::read_window fills them; both vocoder families build their windows with window_spec().
float silent_mel_value(const config::AudioOptions& audio);

// The training window of a vocoder: `window_samples` samples (a whole number of frames: Note
// [Hop = product of the upsampling], models/vocoder_options.h) and their mel frames, with
// `context` frames of mel more on each side (WaveNet's cin_pad), past an utterance's end filled by
// Note [Silent-mel floor].
data::SegmentSpec window_spec(const config::AudioOptions& audio, int64_t window_samples,
                              int64_t context = 0);

// A batch of training windows on the rank's device.
class WindowBatch final : public train::FamilyBatch {
 public:
  explicit WindowBatch(data::SegmentBatch batch) : batch(std::move(batch)) {}
  const std::vector<std::string>& ids() const override { return batch.ids; }
  train::BatchCounts counts() const override {
    const int64_t frames = batch.size() * batch.mel.size(2);
    return {batch.size(), frames, frames};
  }
  data::SegmentBatch batch;
};

// A SegmentLoader's batches, each moved to `device` (asynchronously from pinned memory).
class WindowSource final : public train::BatchSource {
 public:
  WindowSource(std::unique_ptr<data::SegmentLoader> loader, torch::Device device)
      : loader_(std::move(loader)), device_(device) {}
  void start_epoch(int64_t epoch, int64_t skip) override { loader_->start_epoch(epoch, skip); }
  std::unique_ptr<train::FamilyBatch> next() override {
    std::optional<data::SegmentBatch> batch = loader_->next();
    if (!batch) return nullptr;
    return std::make_unique<WindowBatch>(batch->to(device_, true));
  }
  int64_t batches_per_epoch() const override { return loader_->batches_per_epoch(); }
  double wait_seconds() const override { return loader_->wait_seconds(); }

 private:
  std::unique_ptr<data::SegmentLoader> loader_;
  torch::Device device_;
};

// What every vocoder family is as a train::Family besides its network and its step: the run's
// context, its store (none for bench), the warning of a store without validation utterances, and
// the phase's batches of training windows (with each window's speaker row when the family keeps a
// speaker table). A family derives from it, builds its model and fills optimizers_.
class WindowFamily : public train::Family {
 public:
  std::vector<train::OptimizerSlot>& optimizers() override { return optimizers_; }
  void set_phase(const data::Phase& phase) override;
  train::BatchSource& train_batches() override;

 protected:
  // `name` names the family in its messages ("hifigan").
  WindowFamily(const train::FamilyContext& context, std::optional<data::FeatureStore> store,
               data::SegmentSpec spec, std::string name);

  const config::Config& config_;
  torch::Device device_;
  dist::Communicator& comm_;
  std::string run_dir_;
  std::optional<data::FeatureStore> store_;
  data::SegmentSpec spec_;
  std::vector<std::string> speakers_;  // the rows windows carry; empty: no speaker rows
  std::vector<train::OptimizerSlot> optimizers_;

 private:
  bool pin_memory_;
  std::string name_;
  std::unique_ptr<WindowSource> train_;
};

// A vocoder family's bench subject: `family` (built without a store) in a phase of shape.batch,
// stepping `batch` synthetic windows of `spec`'s size (shape.frames mel frames when given) on
// `device`: mels drawn from N(0, 1), audio uniform in [-0.5, 0.5).
train::BenchSubject window_bench(std::unique_ptr<train::Family> family, data::SegmentSpec spec,
                                 const train::BenchShape& shape, int64_t n_mels,
                                 const torch::Device& device);

}  // namespace tts::models
