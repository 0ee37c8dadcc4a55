#include "tts/models/window_batches.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include "tts/audio/compression.h"

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

BenchSubject window_bench(std::unique_ptr<train::Family> family, data::SegmentSpec spec,
                          const BenchShape& shape, int64_t n_mels, const torch::Device& device) {
  if (shape.frames > 0) spec.frames = shape.frames;
  BenchSubject subject;
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

}  // namespace tts::models
