// How the model's arithmetic runs on the device, from the train section of the config.
#pragma once

#include "tts/config/train_options.h"

namespace tts::model {

// train.tf32: lets cuBLAS and cuDNN compute fp32 matrix products and convolutions in TF32 on
// Ampere and newer GPUs (about 10 bits of mantissa in the products, fp32 accumulation); off, they
// are exact fp32. Process-wide (libtorch's global context); no effect on the CPU.
void apply_math_settings(const config::TrainOptions& train);

}  // namespace tts::model
