// The parameter count of HiFi-GAN's generator, from its options alone (nothing allocated): what
// models::require_parameter_budget checks before a generator is built from a config read from a
// file. The discriminators' widths are fixed (at most jik876's 70 million parameters).
#pragma once

#include <cstdint>

#include "tts/config/config.h"
#include "tts/models/hifigan/options.h"

namespace tts::hifigan {

// count_parameters() of Generator(options, n_mels), weight-norm magnitudes and biases included;
// a double, since the options may not be validated yet.
double parameter_count(const config::HifiganOptions& options, int64_t n_mels);
inline double parameter_count(const config::Config& config) {
  return parameter_count(config.hifigan, config.audio.n_mels);
}

// The keys that size the generator, for the budget's error.
inline constexpr const char* kSizingKeys =
    "hifigan.upsample_initial_channel, hifigan.upsample_kernel_sizes or "
    "hifigan.resblock_kernel_sizes";

}  // namespace tts::hifigan
