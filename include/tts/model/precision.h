// How the model's arithmetic runs, from the train section of the config: TF32 on CUDA
// (train.tf32) and the precision of the training forward (train.precision).
//
// train.precision = bf16 is mixed precision by autocast, as torch.autocast(dtype=bfloat16) in
// PyTorch: parameters, gradients, the optimizer and its state, and the losses stay fp32; during the
// teacher-forced forward the ops on autocast's lists (matrix products, convolutions) run in bf16,
// with their inputs cast on the fly (each parameter once per forward), and the model's own
// autograd nodes choose their dtypes explicitly (src/model/autocast.h): the recurrent products in
// bf16, the LSTM cells' state and the attention's scores and softmax in fp32. bf16 has fp32's
// exponent range, so no loss scaling is needed. Free-running inference (synthesize, validation
// samples, gta) runs in fp32.
#pragma once

#include <torch/types.h>

#include <string>

#include "tts/config/train_options.h"
#include "tts/model/tacotron2.h"

namespace tts::model {

// train.tf32: lets cuBLAS and cuDNN compute fp32 matrix products and convolutions in TF32 on
// Ampere and newer GPUs (about 10 bits of mantissa in the products, fp32 accumulation); off, they
// are exact fp32. Process-wide (libtorch's global context: the one setting that cannot travel
// with the model); no effect on the CPU. (train.step_products travels with the model:
// build_model.)
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

// The teacher-forced forward in `precision` (train.precision), its outputs in fp32 (at least): the
// losses, alignment metrics and plots read fp32 whatever the forward ran in.
TacotronOutput forward_in_precision(Tacotron2Impl& model, const torch::Tensor& text,
                                    const torch::Tensor& text_lengths, const torch::Tensor& mel,
                                    const torch::Tensor& mel_lengths, config::Precision precision);

// `out` with every floating tensor in fp32 at least (bf16 and fp16 cast up, others unchanged).
TacotronOutput at_least_float(const TacotronOutput& out);

}  // namespace tts::model
