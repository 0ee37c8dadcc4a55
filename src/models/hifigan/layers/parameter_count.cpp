#include "tts/models/hifigan/layers/parameter_count.h"

#include <cmath>

namespace tts::hifigan {
namespace {

// A weight-normed convolution (norm_conv.h): the direction v [out, in, k] (a transposed one's is
// [in, out, k]), the magnitude g, one per row of v, and a bias per output channel.
double conv(double in, double out, double kernel, bool transposed = false) {
  return in * out * kernel + (transposed ? in : out) + out;
}

}  // namespace

double parameter_count(const config::HifiganOptions& options, int64_t n_mels) {
  const double initial = options.upsample_initial_channel;
  double total = conv(static_cast<double>(n_mels), initial, 7);
  const size_t stages = options.upsample_rates.size();
  double channels = initial;
  for (size_t i = 0; i < stages; ++i) {
    const double out = std::floor(channels / 2);
    if (i < options.upsample_kernel_sizes.size()) {
      total += conv(channels, out, options.upsample_kernel_sizes[i], /*transposed=*/true);
    }
    for (size_t j = 0; j < options.resblock_kernel_sizes.size(); ++j) {
      const double dilations = j < options.resblock_dilation_sizes.size()
                                   ? static_cast<double>(options.resblock_dilation_sizes[j].size())
                                   : 0;
      const double convs =
          options.resblock == config::HifiganResblock::k1 ? 2 * dilations : dilations;
      total += convs * conv(out, out, options.resblock_kernel_sizes[j]);
    }
    channels = out;
  }
  return total + conv(channels, 1, 7);
}

}  // namespace tts::hifigan
