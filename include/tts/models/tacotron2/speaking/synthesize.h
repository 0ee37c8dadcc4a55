// Tacotron-2 as an acoustic model (models/roles.h): text -> mel (and linear) -> a vocoder or
// Griffin-Lim -> WAV, with the alignment and mel plots validation draws.
#pragma once

#include "tts/models/roles.h"

namespace tts::tacotron2 {

// Speaks every sentence of `request` with the model `trained` holds (on the CPU): STEM.wav,
// STEM.mel.npy (and STEM.linear.npy with a linear head), with request.plot STEM.alignment.png and
// STEM.mel.png; logs each sentence's length and whether its stop token fired. Throws UsageError
// for a sentence with no speakable characters.
void synthesize(const models::TrainedCheckpoint& trained, const models::SynthesisRequest& request);

}  // namespace tts::tacotron2
