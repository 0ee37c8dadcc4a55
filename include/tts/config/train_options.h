// Config section `train`: optimization, schedules, losses and the event intervals of a run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tts/config/field.h"

namespace tts::config {

// Where training runs: auto is CUDA when available, else the CPU.
enum class Device { kAuto, kCpu, kCuda };
TTS_CHOICE_NAMES(Device, {Device::kAuto, "auto"}, {Device::kCpu, "cpu"}, {Device::kCuda, "cuda"});
enum class Precision { kFp32, kBf16 };
TTS_CHOICE_NAMES(Precision, {Precision::kFp32, "fp32"}, {Precision::kBf16, "bf16"});
enum class LrSchedule { kConstant, kExponential, kNoam, kStaircase, kPerEpoch };
TTS_CHOICE_NAMES(LrSchedule, {LrSchedule::kConstant, "constant"},
                 {LrSchedule::kExponential, "exponential"}, {LrSchedule::kNoam, "noam"},
                 {LrSchedule::kStaircase, "staircase"}, {LrSchedule::kPerEpoch, "per_epoch"});
// Adam's weight decay: added to the gradient (L2, torch.optim.Adam) or decoupled from it
// (torch.optim.AdamW, what HiFi-GAN trains with).
enum class Optimizer { kAdam, kAdamW };
TTS_CHOICE_NAMES(Optimizer, {Optimizer::kAdam, "adam"}, {Optimizer::kAdamW, "adamw"});
// The error of the mel (and linear) outputs.
enum class MelLoss { kMse, kL1 };
TTS_CHOICE_NAMES(MelLoss, {MelLoss::kMse, "mse"}, {MelLoss::kL1, "l1"});
enum class LossNormalization { kRealFrames, kPaddedBatch };
TTS_CHOICE_NAMES(LossNormalization, {LossNormalization::kRealFrames, "real_frames"},
                 {LossNormalization::kPaddedBatch, "padded_batch"});
// Whose statistics BatchNorm normalizes with in training (models/global_batch_norm.h).
enum class BatchNormStatistics { kGlobal, kPerRank };
TTS_CHOICE_NAMES(BatchNormStatistics, {BatchNormStatistics::kGlobal, "global"},
                 {BatchNormStatistics::kPerRank, "per_rank"});

// One row of train.r_schedule, written [from_step, r, batch_size]: from optimizer step
// `from_step` on, the decoder predicts `r` frames a step with `batch_size` utterances per rank.
struct RScheduleRow {
  int from_step = 0;
  int r = 1;
  int batch_size = 1;
  bool operator==(const RScheduleRow& other) const {
    return from_step == other.from_step && r == other.r && batch_size == other.batch_size;
  }
};

// Ceilings no real run reaches: these numbers size batches in memory, so a checkpoint's config may
// not name ones that exhaust it.
// Utterances per rank in a batch: NVIDIA's is 64; 4096 Tacotron utterances fit no device.
inline constexpr int kMaxBatchSize = 4096;
// Micro-batches accumulated per update: 1 to 8 in practice.
inline constexpr int kMaxAccumulate = 1024;
// Most buckets train.length_buckets may ask for: a handful is the point; each shape is a graph
// and its buffers.
inline constexpr int kMaxLengthBuckets = 64;
// Utterances synthesized at each validation: a handful, each up to model.max_decoder_steps.
inline constexpr int kMaxValInferenceUtterances = 1000;

struct TrainOptions {
  // Each field's meaning is documented once, in visit(); dumped configs carry it as a comment.
  int batch_size = 64;
  int accumulate = 1;
  int64_t max_steps = 0;
  int max_epochs = 500;
  int64_t seed = 1234;
  Device device = Device::kAuto;
  Precision precision = Precision::kFp32;
  bool tf32 = false;
  double learning_rate = 1e-3;
  LrSchedule lr_schedule = LrSchedule::kConstant;
  int64_t lr_decay_start = 50000;
  int64_t lr_decay_steps = 50000;
  double lr_decay_rate = 0.5;
  double lr_min = 1e-5;
  int64_t warmup_steps = 4000;
  Optimizer optimizer = Optimizer::kAdam;
  double weight_decay = 1e-6;
  double adam_beta1 = 0.9;
  double adam_beta2 = 0.999;
  double adam_eps = 1e-6;
  double grad_clip_thresh = 1.0;
  MelLoss loss = MelLoss::kMse;
  LossNormalization loss_normalization = LossNormalization::kRealFrames;
  double stop_pos_weight = 1.0;
  double guided_attention_sigma = 0.2;
  double guided_attention_weight = 0.0;
  int log_interval = 10;
  int val_interval = 500;
  int checkpoint_interval = 1000;
  int keep_checkpoints = 5;
  int val_inference_utterances = 2;
  int max_bad_steps = 10;
  bool freeze_batch_norm = false;
  BatchNormStatistics batch_norm = BatchNormStatistics::kGlobal;
  std::vector<RScheduleRow> r_schedule;
  std::vector<std::string> freeze;
  bool validate_at_start = false;
  int early_stopping = 0;
  int length_buckets = 0;
  bool cuda_graphs = false;

  // The largest r of r_schedule; 0 without a schedule (the model is built for
  // model.n_frames_per_step alone).
  int max_scheduled_r() const;

  template <class V>
  void visit(V& v) {
    v("batch_size", batch_size, "utterances per device per step (global = batch_size x ranks)");
    v("accumulate", accumulate, "micro-batches accumulated per optimizer step");
    v("max_steps", max_steps, "stop after this many optimizer steps; 0 = no limit");
    v("max_epochs", max_epochs, "stop after this many epochs");
    v("seed", seed, "seed of initialization, dropout and the sampler");
    v("device", device, "auto (CUDA when available), cpu or cuda");
    v("precision", precision,
      "fp32, or bf16: mixed precision by autocast (products and convolutions of the training "
      "forward in bf16; parameters, gradients, optimizer and losses in fp32); CPU and CUDA");
    v("tf32", tf32,
      "CUDA: fp32 matrix products and convolutions in TF32 on Ampere+ GPUs (faster, ~1e-3 "
      "relative error in the products); no effect on the CPU");
    v("learning_rate", learning_rate, "initial (or peak, for noam) learning rate");
    v("lr_schedule", lr_schedule,
      "constant, exponential (Rayhane), noam (warm-up), staircase (r9y9's vocoder: times "
      "lr_decay_rate every lr_decay_steps steps) or per_epoch (jik876's vocoder: times "
      "lr_decay_rate each epoch)");
    v("lr_decay_start", lr_decay_start, "exponential: step at which decay starts");
    v("lr_decay_steps", lr_decay_steps,
      "exponential: steps per factor of lr_decay_rate; staircase: steps between decays");
    v("lr_decay_rate", lr_decay_rate, "exponential, staircase, per_epoch: the decay factor");
    v("lr_min", lr_min, "exponential: learning-rate floor");
    v("warmup_steps", warmup_steps, "noam: warm-up steps");
    v("optimizer", optimizer, "adam (weight decay as L2) or adamw (decoupled weight decay)");
    v("weight_decay", weight_decay, "weight decay of the optimizer");
    v("adam_beta1", adam_beta1, "Adam beta1");
    v("adam_beta2", adam_beta2, "Adam beta2");
    v("adam_eps", adam_eps, "Adam epsilon");
    v("grad_clip_thresh", grad_clip_thresh, "global gradient-norm clip; 0 = off");
    v("loss", loss, "mel loss: mse or l1");
    v("loss_normalization", loss_normalization,
      "real_frames: each loss a mean over the real (unpadded) frames of the global batch, so an "
      "utterance's weight does not depend on what it is batched with (W ranks x B train exactly "
      "as 1 x W*B); padded_batch: as NVIDIA's Tacotron2Loss, each a mean over every element of "
      "each rank's padded batch (B x T_max), averaged over the ranks");
    v("stop_pos_weight", stop_pos_weight, "BCE weight of positive stop-token targets");
    v("guided_attention_sigma", guided_attention_sigma, "guided-attention loss width");
    v("guided_attention_weight", guided_attention_weight, "guided-attention loss weight; 0 = off");
    v("log_interval", log_interval, "steps between progress lines and metrics records");
    v("val_interval", val_interval, "steps between validations (plots, samples)");
    v("checkpoint_interval", checkpoint_interval, "steps between checkpoints");
    v("keep_checkpoints", keep_checkpoints, "checkpoints kept (oldest removed)");
    v("val_inference_utterances", val_inference_utterances,
      "validation utterances synthesized free-running at each validation");
    v("max_bad_steps", max_bad_steps, "consecutive NaN/Inf steps that stop the run");
    v("freeze_batch_norm", freeze_batch_norm,
      "BatchNorm uses its running statistics, frozen, instead of batch statistics");
    v("batch_norm", batch_norm,
      "BatchNorm's statistics in training: global (over the real, unpadded positions of every "
      "rank's batch, all-reduced: W ranks x B train exactly as 1 x W*B) or per_rank (PyTorch's "
      "and NVIDIA's: each rank's own padded batch; breaks that promise)");
    v("r_schedule", r_schedule,
      "gradual training: [[from_step, r, batch_size], ...], first from_step 0; from each step "
      "on, the decoder predicts r frames per step with that per-rank batch (model."
      "n_frames_per_step and batch_size are then unused); [] = off");
    v("freeze", freeze,
      "fine-tuning: parts that do not train, as parameter-name prefixes (tts-train inspect "
      "lists the names), e.g. [embedding, encoder]; a frozen parameter gets no gradient and is "
      "left out of the optimizer, the gradient all-reduce and the clip; [] = none");
    v("validate_at_start", validate_at_start,
      "validate once before the first step of a new run (not on resume): the starting point of "
      "a fine-tune, the warm-started model as it is");
    v("early_stopping", early_stopping,
      "stop after this many validations in a row whose loss is not below the best so far; every "
      "validation that sets a new best also saves a checkpoint, which rotation never removes; "
      "0 = off");
    v("length_buckets", length_buckets,
      "text-to-mel models: pad each training batch up to one of this many (text, frames) length "
      "buckets, made from the training set's length quantiles when the run starts and recorded "
      "in RUN/length_buckets.txt, so the run sees a handful of batch shapes (what "
      "cuda_graphs replays); costs the extra padding, changes losses and gradients by float "
      "rounding only; 0 = off (each batch padded to its longest)");
    v("cuda_graphs", cuda_graphs,
      "on CUDA, with length_buckets on and accumulate 1: capture one training "
      "iteration per bucket shape as a CUDA graph and replay it (needs a training step that "
      "never synchronizes with the host; docs/training.md); false = eager, the default");
  }
  void validate() const;
};

}  // namespace tts::config
