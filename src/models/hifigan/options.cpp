#include "tts/models/hifigan/options.h"

namespace tts::config {
namespace {

constexpr const char* kWhy = "jik876's configs have 3 or 4";
// The generator's widest layer, its first: jik876's V1 has 512 channels.
constexpr int kMaxChannels = 8192;
// A convolution's kernel or stride: jik876's longest kernel has 16 taps.
constexpr int kMaxKernelSize = 255;

void require_kernels(const char* key, const std::vector<int>& values) {
  require(!values.empty(), key, fmt::format("[{}]", fmt::join(values, ", ")), "must not be empty");
  require_at_most(key, static_cast<int>(values.size()), kMaxHifiganStages, kWhy);
  for (int value : values) {
    require(value >= 1 && value <= kMaxKernelSize, key,
            fmt::format("[{}]", fmt::join(values, ", ")),
            fmt::format("every entry must be in [1, {}]", kMaxKernelSize));
  }
}

}  // namespace

void HifiganOptions::validate() const {
  require_kernels("hifigan.upsample_rates", upsample_rates);
  require_kernels("hifigan.upsample_kernel_sizes", upsample_kernel_sizes);
  require(upsample_kernel_sizes.size() == upsample_rates.size(), "hifigan.upsample_kernel_sizes",
          fmt::format("[{}]", fmt::join(upsample_kernel_sizes, ", ")),
          fmt::format("needs one kernel per upsample rate ({})", upsample_rates.size()));
  for (size_t i = 0; i < upsample_rates.size(); ++i) {
    require(upsample_kernel_sizes[i] >= upsample_rates[i] &&
                (upsample_kernel_sizes[i] - upsample_rates[i]) % 2 == 0,
            "hifigan.upsample_kernel_sizes",
            fmt::format("[{}]", fmt::join(upsample_kernel_sizes, ", ")),
            fmt::format("kernel {} must be at least its rate {} and differ from it by an even "
                        "number (so that each stage multiplies the length exactly)",
                        upsample_kernel_sizes[i], upsample_rates[i]));
  }
  require(upsample_initial_channel >= (1 << upsample_rates.size()),
          "hifigan.upsample_initial_channel", upsample_initial_channel,
          fmt::format("must be at least 2^{} (halved at each of the {} upsamplings)",
                      upsample_rates.size(), upsample_rates.size()));
  require_at_most("hifigan.upsample_initial_channel", upsample_initial_channel, kMaxChannels,
                  "jik876's V1 has 512");
  require_kernels("hifigan.resblock_kernel_sizes", resblock_kernel_sizes);
  for (int kernel : resblock_kernel_sizes) {
    require(kernel % 2 == 1, "hifigan.resblock_kernel_sizes",
            fmt::format("[{}]", fmt::join(resblock_kernel_sizes, ", ")),
            "every kernel must be odd (the blocks keep the length)");
  }
  const size_t per_block = resblock == HifiganResblock::k1 ? 3 : 2;
  require(resblock_dilation_sizes.size() == resblock_kernel_sizes.size(),
          "hifigan.resblock_dilation_sizes", resblock_dilation_sizes.size(),
          fmt::format("needs one dilation list per residual kernel ({})",
                      resblock_kernel_sizes.size()));
  for (const auto& dilations : resblock_dilation_sizes) {
    require(dilations.size() == per_block, "hifigan.resblock_dilation_sizes",
            fmt::format("[{}]", fmt::join(dilations, ", ")),
            fmt::format("resblock {} takes {} dilations per block", resblock, per_block));
    for (int d : dilations) {
      require(d >= 1 && d <= 1024, "hifigan.resblock_dilation_sizes",
              fmt::format("[{}]", fmt::join(dilations, ", ")), "dilations must be in [1, 1024]");
    }
  }
  require(segment_size >= 1, "hifigan.segment_size", segment_size, "must be at least 1");
  require_at_most("hifigan.segment_size", segment_size, kMaxSegmentSize, "jik876 trains on 8192");
  require(fmax_for_loss >= 0, "hifigan.fmax_for_loss", fmax_for_loss,
          "must be >= 0 (0: sample_rate / 2)");
  require(discriminator_divisor == 1 || discriminator_divisor == 2 || discriminator_divisor == 4 ||
              discriminator_divisor == 8,
          "hifigan.discriminator_divisor", discriminator_divisor,
          "must be 1, 2, 4 or 8 (the multi-scale discriminator's grouped convolutions need widths "
          "divisible by 16)");
}

}  // namespace tts::config
