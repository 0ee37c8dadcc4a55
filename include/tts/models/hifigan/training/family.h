// HiFi-GAN as a model family of the trainer core (train/family.h): windows of stored waveforms
// with their mels (data/segments.h), jik876's two updates a step — the discriminators (MPD and
// MSD) on the generator's detached output, then the generator on its adversarial, feature-matching
// and 45 x mel-L1 losses — each through its own gradient reducer, AdamW with a per-epoch decay
// (train.optimizer, train.lr_schedule), and a validation that vocodes whole validation
// utterances and reports the mel L1 of what it generated.
#pragma once

#include <torch/nn/module.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tts/config/config.h"
#include "tts/data/segments.h"
#include "tts/models/hifigan/layers/discriminators.h"
#include "tts/models/hifigan/layers/generator.h"
#include "tts/models/registry.h"
#include "tts/train/family.h"

namespace tts::hifigan {

// The three networks under one module, so that a checkpoint names them "generator.*", "mpd.*"
// and "msd.*".
class HifiganImpl : public torch::nn::Module {
 public:
  HifiganImpl(const config::HifiganOptions& options, int n_mels);
  Generator generator{nullptr};
  MultiPeriodDiscriminator mpd{nullptr};
  MultiScaleDiscriminator msd{nullptr};
};
TORCH_MODULE(Hifigan);

// The family of a training run: the store at context.data_dir (it must keep waveforms).
std::unique_ptr<train::Family> make_family(const train::FamilyContext& context);

// bench's subject: a family without a store (no batches, no validation) and a batch of synthetic
// windows (shape.frames mel frames each; 0: hifigan.segment_size's).
train::BenchSubject make_bench(const train::FamilyContext& context, const train::BenchShape& shape);

// inspect's lines for a HiFi-GAN checkpoint.
models::CheckpointSummary summarize_checkpoint(const checkpoint::Checkpoint& checkpoint,
                                               const config::Config& config);

// What the family registers (models/registry.h): training, bench, inspect, the size check and its
// roles after training.
models::FamilyEntry entry();

// The generator of `trained` on the CPU, in eval mode.
Generator trained_generator(const models::TrainedCheckpoint& trained);

// The vocoder role (models/roles.h): the generator of `trained` on `device`, in eval mode.
std::unique_ptr<models::Vocoder> load_vocoder(const models::TrainedCheckpoint& trained,
                                              const torch::Device& device);

// jik876's files in and out (`convert --from/--to hifigan`).
models::Converter jik876_converter();

// `forward`: mel [frames, n_mels] (or [n_mels, frames]) -> audio [frames * hop].
models::ForwardRole forward_role();

}  // namespace tts::hifigan
