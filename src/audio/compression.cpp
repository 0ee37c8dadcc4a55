#include "tts/audio/compression.h"

#include <torch/torch.h>

#include <cmath>

namespace tts::audio {

Compression::Compression(const config::AudioOptions& options) : options_(options) {
  options_.validate();
}

torch::Tensor Compression::compress(const torch::Tensor& magnitude) const {
  if (options_.compression == "log") return magnitude.clamp_min(options_.log_floor).log();
  const double min_level = std::pow(10.0, options_.min_level_db / 20.0);
  torch::Tensor db = 20.0 * magnitude.clamp_min(min_level).log10() - options_.ref_level_db;
  if (!options_.signal_normalization) return db;
  const double m = options_.max_abs_value;
  const double scaled_range = options_.symmetric ? 2.0 * m : m;
  const double low = options_.symmetric ? -m : 0.0;
  torch::Tensor normalized =
      scaled_range * ((db - options_.min_level_db) / -options_.min_level_db) + low;
  return options_.allow_clipping ? normalized.clamp(low, m) : normalized;
}

torch::Tensor Compression::decompress(const torch::Tensor& compressed) const {
  if (options_.compression == "log") return compressed.exp();
  torch::Tensor db = compressed;
  if (options_.signal_normalization) {
    const double m = options_.max_abs_value;
    const double scaled_range = options_.symmetric ? 2.0 * m : m;
    const double low = options_.symmetric ? -m : 0.0;
    torch::Tensor c = options_.allow_clipping ? compressed.clamp(low, m) : compressed;
    db = (c - low) * (-options_.min_level_db / scaled_range) + options_.min_level_db;
  }
  return torch::pow(10.0, (db + options_.ref_level_db) / 20.0);
}

}  // namespace tts::audio
