// Tacotron-2's teacher-forced forward pass of a batch and its losses: what a training step
// back-propagates and what validation averages, computed one way for both.
//
// Note [Exact global batch]
// With train.loss_normalization real_frames, every frame loss is a mean over the real (unpadded)
// frames of the *global* batch (every rank's batch of the step), and the guided-attention loss a
// mean over its (decoder step, text position) pairs, so that W ranks x B utterances train exactly
// as 1 rank x W*B. Each rank computes its losses as means over its own frames and pairs, and
// weights them by its share of the global counts times the world size, which the gradient
// reducer divides by: the reduced gradient is then the gradient of the global means. The global
// counts need no collective: the sampler's plan tells every rank every rank's batch
// (data::Loader fills Batch::global_real_frames and global_attention_pairs from it), and
// global_batch_weights() below turns them into the weights. padded_batch (NVIDIA's loss) keeps
// each rank's padded-batch means, averaged over the ranks as NVIDIA's DistributedDataParallel
// does; only guided attention stays global.
#pragma once

#include "tts/config/train_options.h"
#include "tts/data/batch.h"
#include "tts/models/keyed_dropout.h"
#include "tts/models/tacotron2/layers/batch_context.h"
#include "tts/models/tacotron2/layers/network.h"
#include "tts/models/tacotron2/training/loss.h"
#include "tts/train/reporting.h"

namespace tts::tacotron2 {

// Runs `model` on `batch` in train.precision (precision.h), puts its outputs in `*output`
// and returns the loss parts against the batch's targets (loss.h). `context`: a training
// step's (training_context()); validation runs with the default.
tacotron2::LossParts forward_loss(tacotron2::Tacotron2Impl& model, const data::Batch& batch,
                                  const config::TrainOptions& train,
                                  tacotron2::TacotronOutput* output,
                                  const BatchContext& context = {});

// The context of a training step's forward of `batch` (Note [Dropout keyed by utterance], Note
// [BatchNorm over the global batch]): `dropout` holds the batch's streams (KeyedDropout of the
// seed, the step and batch.ids; the caller keeps it alive); `comm` sums BatchNorm's statistics
// when train.batch_norm is global.
BatchContext training_context(const data::Batch& batch, const models::KeyedDropout& dropout,
                              const config::TrainOptions& train, dist::Communicator& comm);

// The settings of `config` under which a Tacotron-2 run does not keep the promises (W ranks x B
// train as 1 x W*B; a resumed run ends as an uninterrupted one), each as "key=value: why"; empty
// at every shipped config's defaults. `train` logs them once at start.
std::vector<std::string> settings_that_break_the_promises(const config::Config& config);

// What this rank's frame losses and guided-attention loss are scaled by before backward (Note
// [Exact global batch]): 0-dim float64 tensors, undefined for 1 (always on one rank). Computed
// from the batch's device counts (Batch::counts) when it has them (static buffers: what a
// replayed CUDA graph reads afresh), else from its host counts, with the same arithmetic. Throws
// tts::Error for a batch of several ranks that lacks its global batch's counts (one not cut by
// the loader's plan).
struct LossWeights {
  torch::Tensor frames;
  torch::Tensor attention_pairs;
};
LossWeights global_batch_weights(const data::Batch& batch, int world_size,
                                 config::LossNormalization normalization);

// The loss a training step back-propagates on this rank: the parts' total under
// global_batch_weights.
torch::Tensor training_loss(const tacotron2::LossParts& parts, const data::Batch& batch,
                            int world_size, const config::TrainOptions& train);

// Adds the parts that are on to `sums` under their metric names ("loss" first).
void add_losses(train::LossSums& sums, const tacotron2::LossParts& parts);

}  // namespace tts::tacotron2
