// The rules every vocoder family's options share.
//
// Note [Hop = product of the upsampling]: a vocoder turns each mel frame into audio.hop_length
// samples, so its upsampling stages (hifigan.upsample_rates, wavenet.upsample_scales) multiply to
// the hop. The generators rely on it to give frames * hop samples
// (models/hifigan/layers/generator.h, models/wavenet/layers/network.h); the training windows
// (models/window_batches.h) cut whole frames of mel beside frames * hop samples of waveform; and
// `vocode` checks a mel's settings against the vocoder's through the hop it was trained on.
#pragma once

#include <vector>

#include "tts/config/audio_options.h"
#include "tts/config/train_options.h"

namespace tts::config {

// Throws UsageError with the key path when the vocoder `kind_name` (its options' `scales_key` and
// `window_key`) breaks Note [Hop = product of the upsampling] against `audio`, when its training
// window holds no whole number of frames, when audio.waveforms is off (it trains on them), or when
// `train` asks for a precision it does not train in.
void validate_vocoder(const char* kind_name, const char* scales_key, const std::vector<int>& scales,
                      const char* window_key, int window, const AudioOptions& audio,
                      const TrainOptions& train);

}  // namespace tts::config
