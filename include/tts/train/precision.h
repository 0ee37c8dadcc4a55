// How a run's arithmetic runs, from the train section of the config: TF32 on CUDA (train.tf32) and
// the precision of the training forward (train.precision). Resolved once by the trainer core (and
// bench) with the rank's placement; each family's forward honours train.precision through
// AutocastScope, and a family that cannot is refused at config time (models/family_sections.h).
//
// train.precision = bf16 is mixed precision by autocast, as torch.autocast(dtype=bfloat16) in
// PyTorch: parameters, gradients, the optimizer and its state, and the losses stay fp32; during the
// forward the ops on autocast's lists (matrix products, convolutions) run in bf16, with their
// inputs cast on the fly (each parameter once per forward), and a family's own autograd nodes
// choose their dtypes explicitly (Tacotron-2's: src/models/tacotron2/kernels/autocast.h). bf16 has
// fp32's exponent range, so no loss scaling is needed. Free-running inference runs in fp32.
#pragma once

#include <torch/types.h>

#include <cstdint>

#include "tts/config/train_options.h"

namespace tts::train {

// train.tf32: lets cuBLAS and cuDNN compute fp32 matrix products and convolutions in TF32 on
// Ampere and newer GPUs (about 10 bits of mantissa in the products, fp32 accumulation); off, they
// are exact fp32. Process-wide (libtorch's global context: the one setting that cannot travel
// with the model); no effect on the CPU.
void apply_tf32(bool tf32);

// Refuses (tts::UsageError, with the reason and the fix) a train.precision that this libtorch
// cannot run on `device`: bf16 is probed by one small matrix product under autocast.
void check_precision(config::Precision precision, const torch::Device& device);

// While it lives, autocast is on for `device`'s type in bf16 when precision is bf16 (nothing
// happens for fp32); the destructor restores the previous state and, leaving the outermost
// region, drops the parameters' cached casts. Scopes nest.
class AutocastScope {
 public:
  AutocastScope(const torch::Device& device, config::Precision precision);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool active_ = false;
  c10::DeviceType type_ = c10::DeviceType::CPU;
  bool was_enabled_ = false;
  at::ScalarType previous_dtype_ = at::kFloat;
};

// The machine's matrix-product rate in GFLOP/s: the best of a few square GEMMs of `size` in
// `dtype` on `device`, with the current intra-op threads. The peak a step's achieved rate is read
// against (bench).
double measure_gemm_gflops(const torch::Device& device, torch::ScalarType dtype,
                           int64_t size = 1024);

}  // namespace tts::train
