#include "tts/models/window_batches.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include "tts/audio/compression.h"
#include "tts/core/error.h"
#include "tts/core/logging.h"
#include "tts/dist/communicator.h"

namespace tts::models {

float silent_mel_value(const config::AudioOptions& audio) {
  float value = 0.0f;
  audio::Compression(audio).compress_in_place(&value, 1);
  return value;
}

data::SegmentSpec window_spec(const config::AudioOptions& audio, int64_t window_samples,
                              int64_t context) {
  data::SegmentSpec spec;
  spec.hop = audio.hop_length;
  spec.frames = window_samples / spec.hop;
  spec.context = context;
  spec.mel_floor = silent_mel_value(audio);
  return spec;
}

train::BenchSubject window_bench(std::unique_ptr<train::Family> family, data::SegmentSpec spec,
                                 const train::BenchShape& shape, int64_t n_mels,
                                 const torch::Device& device) {
  if (shape.frames > 0) spec.frames = shape.frames;
  train::BenchSubject subject;
  subject.phase = data::Phase{1, static_cast<int>(shape.batch)};
  subject.frames = spec.frames;
  subject.samples = spec.frames * spec.hop;
  subject.family = std::move(family);
  subject.family->set_phase(subject.phase);
  auto floats = torch::TensorOptions().device(device);
  data::SegmentBatch windows;
  windows.mel = torch::randn({shape.batch, n_mels, spec.frames + 2 * spec.context}, floats);
  windows.audio = torch::rand({shape.batch, 1, spec.frames * spec.hop}, floats) - 0.5;
  for (int64_t i = 0; i < shape.batch; ++i) windows.ids.push_back(fmt::format("synthetic_{}", i));
  subject.batch = std::make_unique<WindowBatch>(std::move(windows));
  return subject;
}

WindowFamily::WindowFamily(const train::FamilyContext& context,
                           std::optional<data::FeatureStore> store, data::SegmentSpec spec,
                           std::string name)
    : config_(context.config),
      device_(context.placement.device),
      comm_(context.comm),
      run_dir_(context.run_dir),
      store_(std::move(store)),
      spec_(spec),
      pin_memory_(context.placement.pin_memory),
      name_(std::move(name)) {
  if (store_ && comm_.rank() == 0 && store_->val().empty()) {
    log::get("train")->warn(
        "the store has no validation utterances (data.val_size: 0): the run does not validate");
  }
}

void WindowFamily::set_phase(const data::Phase& phase) {
  if (!store_) return;
  train_.reset();
  train_ = std::make_unique<WindowSource>(
      std::make_unique<data::SegmentLoader>(store_->train(), config_.audio.n_mels, spec_,
                                            phase.batch_size, comm_.rank(), comm_.size(),
                                            config_.train.seed, config_.data.prefetch_batches,
                                            config_.data.num_workers > 0, pin_memory_, speakers_),
      device_);
}

train::BatchSource& WindowFamily::train_batches() {
  TTS_CHECK(train_ != nullptr, "{}: no batches before set_phase, or without a store", name_);
  return *train_;
}

}  // namespace tts::models
