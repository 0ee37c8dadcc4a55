// Learning-rate schedules: constant, exponential decay with a floor (Rayhane-mamah/Tacotron-2),
// and noam warm-up (Transformer-style, peaking at train.learning_rate after warmup_steps).
#pragma once

#include <cstdint>

#include "tts/config/train_options.h"

namespace tts::train {

// The learning rate for optimizer step `step` (1-based: the first update is step 1).
double learning_rate_at(const config::TrainOptions& options, int64_t step);

}  // namespace tts::train
