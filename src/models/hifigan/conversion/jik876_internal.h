// What the two halves of conversion/jik876.h share.
#pragma once

#include <string>

#include "tts/config/config.h"

namespace tts::hifigan {

// torch.optim.AdamW's default weight decay, which jik876's train.py keeps.
inline constexpr double kJik876WeightDecay = 0.01;
// And its default epsilon.
inline constexpr double kJik876AdamEps = 1e-8;

// config.json as jik876's code reads it (config_v1.json's keys) for `config`.
std::string jik876_config_json(const config::Config& config);

}  // namespace tts::hifigan
