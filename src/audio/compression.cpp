#include "tts/audio/compression.h"

#include <torch/torch.h>

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "vector_math.h"

namespace tts::audio {

Compression::Compression(const config::AudioOptions& options) : options_(options) {
  options_.validate();
  if (options_.compression == config::Compression::kLog) {
    floor_ = static_cast<float>(options_.log_floor);
    return;
  }
  // D = 20 log10(max(S, min_level)) - ref = (20 / ln 10) ln(max(S, min_level)) - ref; the
  // normalization is affine in D, so the whole map is one scale and one offset on ln.
  floor_ = static_cast<float>(std::pow(10.0, options_.min_level_db / 20.0));
  double scale = 20.0 / std::log(10.0);
  double offset = -options_.ref_level_db;
  if (options_.signal_normalization) {
    const double m = options_.max_abs_value;
    const double scaled_range = options_.symmetric ? 2.0 * m : m;
    const double low = options_.symmetric ? -m : 0.0;
    const double gain = scaled_range / -options_.min_level_db;
    offset = gain * (offset - options_.min_level_db) + low;
    scale *= gain;
    clip_ = options_.allow_clipping;
    low_ = static_cast<float>(low);
    high_ = static_cast<float>(m);
  }
  scale_ = static_cast<float>(scale);
  offset_ = static_cast<float>(offset);
}

void Compression::compress_in_place(float* values, int64_t count) const {
  if (floor_ >= FLT_MIN) {
    detail::scaled_log(values, values, count, floor_, scale_, offset_, clip_, low_, high_);
    return;
  }
  // A floor below the smallest normal float (log_floor < 1.2e-38): libm's log.
  for (int64_t i = 0; i < count; ++i) {
    const float v = scale_ * std::log(std::max(values[i], floor_)) + offset_;
    values[i] = clip_ ? std::min(std::max(v, low_), high_) : v;
  }
}

torch::Tensor Compression::compress(const torch::Tensor& magnitude) const {
  // The one-pass kernel writes raw memory outside autograd: only where no gradient is wanted.
  if (magnitude.device().is_cpu() && magnitude.scalar_type() == torch::kFloat32 &&
      !(magnitude.requires_grad() && torch::GradMode::is_enabled())) {
    torch::Tensor out = magnitude.detach().clone(at::MemoryFormat::Contiguous);
    compress_in_place(out.data_ptr<float>(), out.numel());
    return out;
  }
  if (options_.compression == config::Compression::kLog)
    return magnitude.clamp_min(options_.log_floor).log();
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
  if (options_.compression == config::Compression::kLog) return compressed.exp();
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
