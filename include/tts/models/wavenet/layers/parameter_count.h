// The parameter count of r9y9's WaveNet, from its options alone (nothing allocated): what
// models::require_parameter_budget checks before a network is built from a config read from a
// file.
#pragma once

#include <cstdint>

#include "tts/config/config.h"
#include "tts/models/wavenet/options.h"

namespace tts::wavenet {

// count_parameters() of WaveNet(options, cin_channels); a double, since the options may not be
// validated yet. The moving average that training keeps is a copy of as many.
double parameter_count(const config::WavenetOptions& options, int64_t cin_channels);
inline double parameter_count(const config::Config& config) {
  return parameter_count(config.wavenet, config.audio.n_mels);
}

// The keys that size the network, for the budget's error.
inline constexpr const char* kSizingKeys =
    "wavenet.layers, wavenet.residual_channels, wavenet.gate_channels, "
    "wavenet.skip_out_channels, wavenet.kernel_size or wavenet.cin_pad";

}  // namespace tts::wavenet
