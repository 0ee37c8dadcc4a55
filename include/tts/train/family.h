// The model-family seam: everything the trainer core (the loop, the step, the scheduler,
// checkpoints, metrics, the report, the launchers) needs from a model, and nothing more. The core
// knows no model: a family (src/models/<kind>/, registered once in src/models/registry.cpp and
// chosen by model.kind) supplies
//   - its module: every parameter and buffer a checkpoint holds;
//   - its optimizers, each with its parameter set, learning-rate rule and clip threshold (a GAN
//     has two: discriminator, then generator; each gets its own gradient reducer);
//   - its batches: a rank's deterministic stream for the training phase in force;
//   - its step: forward and losses, and one `Updates::apply` per optimizer (backward through that
//     optimizer's reducer, clip, update) in the order the family's algorithm takes them;
//   - its validation: the "val" record every rank computes, and the plots and audio rank 0 draws
//     after the step's checkpoint;
//   - a warm start from another checkpoint (its own, or its reference implementation's);
//   - the input symbols its checkpoints record, when it reads text.
// What a trained model of the family does after training (speak, vocode, convert, run forward) is
// not training's: its roles, models/roles.h, reached through its registration (models/registry.h).
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tts/config/config.h"
#include "tts/data/phase.h"
#include "tts/dist/placement.h"
#include "tts/train/metrics.h"

namespace torch::nn {
class Module;
}
namespace torch::optim {
class Optimizer;
}
namespace tts::dist {
class Communicator;
}  // namespace tts::dist

namespace tts::train {

class Updates;  // step.h

// One optimizer of a family and what it updates.
struct OptimizerSlot {
  std::string name;                       // "model"; a GAN: "discriminator", "generator"
  std::vector<torch::Tensor> parameters;  // what its reducer reduces and its clip measures
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  // The learning rate of optimizer step `step` (1-based: the first update is step 1), taken in
  // epoch `epoch` (0-based).
  std::function<double(int64_t step, int64_t epoch)> learning_rate;
  double grad_clip = 0;  // global gradient-norm clip of this set; 0: measured, not clipped
};

// The slot every family builds for an Adam or AdamW of train.* (adam_settings) over `parameters`:
// the run's learning-rate schedule (train.lr_schedule) and clip (train.grad_clip_thresh).
OptimizerSlot adam_slot(std::string name, std::vector<torch::Tensor> parameters,
                        const config::TrainOptions& train);

// Elements of `module`'s parameters (its buffers not counted).
int64_t count_parameters(torch::nn::Module& module);

// What the step's meters count of a batch (host values: no device synchronization).
struct BatchCounts {
  int64_t utterances = 0;
  int64_t frames = 0;         // real (unpadded) output frames
  int64_t padded_frames = 0;  // frames the step computes, padding included
};

// A batch as the core sees it; the family that made it reads the rest.
class FamilyBatch {
 public:
  virtual ~FamilyBatch() = default;
  virtual const std::vector<std::string>& ids() const = 0;
  virtual BatchCounts counts() const = 0;
  // train.cuda_graphs (train/static_batches.h): the batch's static shape as a key (empty: the
  // family's batches cannot be replayed), buffers of that shape on the batch's device that stay
  // where they are (nullptr when not replayable), and copying this batch into such buffers.
  virtual std::string static_shape() const { return {}; }
  virtual std::unique_ptr<FamilyBatch> allocate_static() const { return nullptr; }
  virtual void copy_into(FamilyBatch& buffers) const { (void)buffers; }
};

// One rank's training batches, deterministic for (seed, epoch, phase, world size).
class BatchSource {
 public:
  virtual ~BatchSource() = default;
  // Starts `epoch` after its first `skip` batches (resuming mid-epoch).
  virtual void start_epoch(int64_t epoch, int64_t skip) = 0;
  // The next batch on the rank's device, or nullptr at the end of the epoch.
  virtual std::unique_ptr<FamilyBatch> next() = 0;
  virtual int64_t batches_per_epoch() const = 0;
  // Seconds next() waited for data, cumulative.
  virtual double wait_seconds() const = 0;
};

// What one validation produced. Every rank holds `record` ("val" metrics; rank 0's is written);
// write_artifacts is rank 0's optional work (plots, audio), run after the step's checkpoint: a
// failure in it is a warning.
class ValidationOutcome {
 public:
  virtual ~ValidationOutcome() = default;
  MetricRecord record{"val", {}};
  virtual void write_artifacts(MetricSink& metrics) { (void)metrics; }
};

class Family {
 public:
  virtual ~Family() = default;
  // Every parameter and buffer, by plain name: what checkpoints, the replica checks and the
  // parameter broadcast cover.
  virtual torch::nn::Module& module() = 0;
  virtual std::vector<OptimizerSlot>& optimizers() = 0;
  // Enters a training phase (per-rank batch, and r for a model with a reduction factor):
  // (re)builds the batch sources. Called before the first step and at each r_schedule switch.
  virtual void set_phase(const data::Phase& phase) = 0;
  virtual BatchSource& train_batches() = 0;
  // One optimizer step over `micro_batches` (train.accumulate of them): forward, losses, and
  // `updates.apply` for each optimizer in the order the algorithm takes them.
  virtual void train_step(std::vector<std::unique_ptr<FamilyBatch>>& micro_batches,
                          Updates& updates) = 0;
  // Collective: every rank calls it after the same step. nullptr when the run has no validation
  // data. `metrics` is rank 0's sink (nullptr elsewhere). Leaves the random streams as it found
  // them, so that when a run validates does not change what it trains.
  virtual std::unique_ptr<ValidationOutcome> validate(int64_t step, MetricSink* metrics) = 0;
  // Fills the module from another checkpoint's weights (names with a prefix in `skip` keep
  // their initialization); returns the summary to log.
  virtual std::string warm_start(const std::string& path, const std::vector<std::string>& skip) = 0;
  // The input symbols its embedding rows stand for, in id order, which its checkpoints record
  // (none for a model without text input).
  virtual std::vector<std::string> input_symbols() const { return {}; }
  // The speakers its speaker embedding rows stand for, in row order, which its checkpoints record
  // (none for a model without speaker input).
  virtual std::vector<std::string> speakers() const { return {}; }
  // On resuming, before the first set_phase: adopts the speaker table of the checkpoint whose
  // weights it now holds (`speakers`, Checkpoint::speakers); throws tts::Error when the data's
  // speakers are not all in it.
  virtual void resume_speakers(const std::vector<std::string>& speakers) { (void)speakers; }
  // Why a captured CUDA graph of this family's training step would not repeat the step (Note
  // [Replaying a training step], train/cuda_graph_step.h); empty when it would. train.
  // cuda_graphs is refused with this reason.
  virtual std::string replay_blocker() const {
    return "this model family has not stated that a replay of its training step repeats it";
  }
  // "28.19M parameters; 120 train and 4 validation utterances", for the run's first log line.
  virtual std::string describe() = 0;
};

// What a family is built from: the run's config, this rank's placement (device, pinning) and
// communicator, and where its data and run folder are.
struct FamilyContext {
  const config::Config& config;
  dist::Placement placement;
  dist::Communicator& comm;
  std::string data_dir;  // the feature store
  std::string run_dir;   // RUN/ (plots/, samples/ of validation)
  data::Phase initial_phase;
};

// Builds the family's model (seeded by the caller) and optimizers; batch sources come with
// set_phase.
using FamilyFactory = std::function<std::unique_ptr<Family>(const FamilyContext&)>;

}  // namespace tts::train
