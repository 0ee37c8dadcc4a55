// Gradual training (train.r_schedule): the reduction factor r (mel frames per decoder step) and
// the per-rank batch size change at given steps, coarse and large first (alignment comes sooner),
// fine later (better audio). Without a schedule there is one phase: model.n_frames_per_step and
// train.batch_size.
#pragma once

#include <cstdint>

#include "tts/config/config.h"
#include "tts/data/phase.h"

namespace tts::train {

// The phase of the steps that follow `steps_done` optimizer steps: the last row of
// train.r_schedule whose from_step <= steps_done.
data::Phase phase_at(const config::Config& config, int64_t steps_done);

}  // namespace tts::train
