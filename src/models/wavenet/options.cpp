#include "tts/models/wavenet/options.h"

#include <cstdint>

#include "tts/config/audio_options.h"

namespace tts::config {

void WavenetOptions::validate() const {
  auto channels = [](const char* key, int value) {
    require(value >= 1, key, value, "must be at least 1");
    require_at_most(key, value, kMaxWavenetChannels, "r9y9's widest layers have 512 channels");
  };
  require(out_channels >= 2, "wavenet.out_channels", out_channels, "must be at least 2");
  require_at_most("wavenet.out_channels", out_channels, kMaxWavenetChannels,
                  "r9y9's mixtures have 10 components (30 channels)");
  require(output_distribution != WavenetOutput::kLogistic || out_channels % 3 == 0,
          "wavenet.out_channels", out_channels,
          "a Logistic mixture takes 3 channels per component (weight, mean, log scale)");
  require(
      output_distribution != WavenetOutput::kNormal || out_channels == 2 || out_channels % 3 == 0,
      "wavenet.out_channels", out_channels,
      "a Normal output takes 2 channels (mean, log scale) or 3 per mixture component");
  require(layers >= 1, "wavenet.layers", layers, "must be at least 1");
  require_at_most("wavenet.layers", layers, kMaxWavenetLayers, "r9y9's deepest has 30");
  require(stacks >= 1 && layers % stacks == 0, "wavenet.stacks", stacks,
          fmt::format("must divide wavenet.layers ({})", layers));
  channels("wavenet.residual_channels", residual_channels);
  channels("wavenet.gate_channels", gate_channels);
  require(gate_channels % 2 == 0, "wavenet.gate_channels", gate_channels,
          "must be even (tanh half and sigmoid half)");
  channels("wavenet.skip_out_channels", skip_out_channels);
  require(dropout >= 0 && dropout < 1, "wavenet.dropout", dropout, "must be in [0, 1)");
  require(kernel_size >= 1 && kernel_size <= 255, "wavenet.kernel_size", kernel_size,
          "must be in [1, 255]");
  require(cin_pad >= 0 && cin_pad <= 255, "wavenet.cin_pad", cin_pad, "must be in [0, 255]");
  require(!upsample_scales.empty() && upsample_scales.size() <= 16, "wavenet.upsample_scales",
          fmt::format("[{}]", fmt::join(upsample_scales, ", ")), "needs 1 to 16 scales");
  for (int scale : upsample_scales) {
    require(scale >= 1 && scale <= 1024, "wavenet.upsample_scales",
            fmt::format("[{}]", fmt::join(upsample_scales, ", ")),
            "every scale must be in [1, 1024]");
  }
  int64_t hop = 1;
  for (int scale : upsample_scales) hop *= scale;
  require(hop <= kMaxFrameSamples, "wavenet.upsample_scales",
          fmt::format("[{}]", fmt::join(upsample_scales, ", ")),
          fmt::format("their product must be at most {} samples a frame", kMaxFrameSamples));
  require(
      freq_axis_kernel_size >= 1 && freq_axis_kernel_size <= 255 && freq_axis_kernel_size % 2 == 1,
      "wavenet.freq_axis_kernel_size", freq_axis_kernel_size, "must be odd, in [1, 255]");
  require_at_most("wavenet.gin_channels", gin_channels, kMaxWavenetChannels,
                  "speaker embeddings have 16 to 256 channels");
  require(gin_channels <= 0 || n_speakers >= 1 || !use_speaker_embedding, "wavenet.n_speakers",
          n_speakers, "must be at least 1 with a speaker embedding (gin_channels > 0)");
  require_at_most("wavenet.n_speakers", n_speakers, kMaxWavenetSpeakers,
                  "multi-speaker corpora have at most a few thousand speakers");
  require(log_scale_min < 0, "wavenet.log_scale_min", log_scale_min, "must be < 0");
  require(quantize_channels >= 2 && quantize_channels <= (1 << 24), "wavenet.quantize_channels",
          quantize_channels, "must be in [2, 2^24]");
  require(max_time_steps >= 1, "wavenet.max_time_steps", max_time_steps, "must be at least 1");
  require_at_most("wavenet.max_time_steps", max_time_steps, kMaxTimeSteps,
                  "r9y9 trains on 10240 samples");
  require(ema_decay >= 0 && ema_decay < 1, "wavenet.ema_decay", ema_decay, "must be in [0, 1)");
}

}  // namespace tts::config
