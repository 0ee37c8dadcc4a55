// Learning-rate schedules: constant, exponential decay with a floor (Rayhane-mamah/Tacotron-2),
// noam warm-up (Transformer-style, peaking at train.learning_rate after warmup_steps), staircase
// decay (r9y9's WaveNet) and decay per epoch (jik876's HiFi-GAN).
#pragma once

#include <cstdint>

#include "tts/config/train_options.h"

namespace tts::train {

// The learning rate for optimizer step `step` (1-based: the first update is step 1), taken in
// epoch `epoch` (0-based).
double learning_rate_at(const config::TrainOptions& options, int64_t step, int64_t epoch = 0);

}  // namespace tts::train
