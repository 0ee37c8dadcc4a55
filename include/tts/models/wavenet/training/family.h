// WaveNet (r9y9/wavenet_vocoder) as a model family of the trainer core (train/family.h): windows
// of max_time_steps stored samples with their mels and cin_pad frames of context each side
// (data/segments.h), the teacher-forced mixture NLL (a mean per predicted sample; r9y9's
// masked mean), one optimizer (train.optimizer: Adam, r9y9's lr schedule "staircase"), and the
// exponential moving average of the weights r9y9's train.py keeps, updated after every optimizer
// step and saved in the checkpoint: synthesis and validation use it.
#pragma once

#include <torch/nn/module.h>

#include <map>
#include <memory>
#include <string>

#include "tts/checkpoint/checkpoint.h"
#include "tts/config/config.h"
#include "tts/models/registry.h"
#include "tts/models/wavenet/conversion/r9y9.h"
#include "tts/models/wavenet/layers/network.h"
#include "tts/train/family.h"

namespace tts::wavenet {

// The trained network ("wavenet.*", r9y9's names below the prefix) and, with
// wavenet.exponential_moving_average, its moving average ("ema.*": parameters that no optimizer
// updates and no gradient reaches).
class WavenetTrainingImpl : public torch::nn::Module {
 public:
  WavenetTrainingImpl(const config::WavenetOptions& options, int64_t n_mels);
  // r9y9's ExponentialMovingAverage.update for every parameter: ema -= (1 - decay) * (ema - w).
  // No-op without an average.
  void update_average(double decay);
  // The weights synthesis uses: the average when kept, else the trained network.
  WaveNet& synthesis_network() { return ema ? ema : wavenet; }

  WaveNet wavenet{nullptr};
  WaveNet ema{nullptr};  // null without wavenet.exponential_moving_average
};
TORCH_MODULE(WavenetTraining);

// The family of a training run: the store at context.data_dir (it must keep waveforms).
std::unique_ptr<train::Family> make_family(const train::FamilyContext& context);

// bench's subject: a family without a store (no batches, no validation) and a batch of synthetic
// windows (shape.frames mel frames each; 0: wavenet.max_time_steps's).
train::BenchSubject make_bench(const train::FamilyContext& context, const train::BenchShape& shape);

// inspect's lines for a WaveNet checkpoint.
models::CheckpointSummary summarize_checkpoint(const checkpoint::Checkpoint& checkpoint,
                                               const config::Config& config);

// The network synthesis uses from a WaveNet checkpoint ("ema.*" when it holds an average, else
// "wavenet.*"), as r9y9 names its tensors.
std::map<std::string, torch::Tensor> synthesis_tensors(const checkpoint::Checkpoint& checkpoint);

// Our checkpoint of r9y9's model: its weights as "wavenet.*", the average started from them (as
// r9y9's train.py registers it), step = its global_step; `config` (model.kind wavenet) gives the
// rest of the run's settings.
checkpoint::Checkpoint checkpoint_from_r9y9(const WavenetImport& imported,
                                            const config::Config& config);

// What the family registers (models/registry.h): training, bench, inspect, the size check and its
// roles after training.
models::FamilyEntry entry();

// The network synthesis uses from `trained` (synthesis_tensors) on the CPU, in eval mode.
WaveNet trained_network(const models::TrainedCheckpoint& trained);

// The vocoder role (models/roles.h): the network synthesis uses (its moving average when kept),
// generating on the CPU whatever `device`.
std::unique_ptr<models::Vocoder> load_vocoder(const models::TrainedCheckpoint& trained,
                                              const torch::Device& device);

// r9y9's files in and out (`convert --from/--to wavenet`).
models::Converter r9y9_converter();

// `forward`: audio [T], mel [frames, n_mels] -> logits [T, out_channels] and the teacher-forced
// mean NLL per predicted sample, r9y9's loss.
models::ForwardRole forward_role();

}  // namespace tts::wavenet
