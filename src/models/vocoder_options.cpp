#include "tts/models/vocoder_options.h"

#include <cstdint>

#include "tts/config/field.h"

namespace tts::config {

void validate_vocoder(const char* kind_name, const char* scales_key, const std::vector<int>& scales,
                      const char* window_key, int window, const AudioOptions& audio,
                      const TrainOptions& train) {
  const int hop = audio.hop_length;
  require(audio.waveforms, "audio.waveforms", audio.waveforms,
          fmt::format("must be true with model.kind: {}: a vocoder trains on the waveform of each "
                      "mel, which preprocess keeps only when asked",
                      kind_name));
  int64_t product = 1;
  for (int scale : scales) product *= scale;
  require(product == hop, scales_key, fmt::format("[{}]", fmt::join(scales, ", ")),
          fmt::format("must multiply to audio.hop_length ({}): each mel frame becomes that many "
                      "samples",
                      hop));
  require(window % hop == 0, window_key, window,
          fmt::format("must be a multiple of audio.hop_length ({}), so that a window holds whole "
                      "mel frames",
                      hop));
  require(train.precision == Precision::kFp32, "train.precision", train.precision,
          fmt::format("model.kind {} trains in fp32 only (its convolutions have no bf16 dtype "
                      "policy yet): set train.precision: fp32",
                      kind_name));
}

}  // namespace tts::config
