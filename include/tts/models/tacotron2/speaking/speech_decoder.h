// Tacotron-2 as a SpeechDecoder (models/roles.h): sentences decoded together one step at a time,
// joining and leaving the batch at step boundaries, each encoded alone and decoded with its own
// keyed prenet masks; its postnet frames leave in chunks as soon as the frames the postnet sees
// past them (its receptive field) are decoded.
#pragma once

#include <memory>

#include "tts/models/roles.h"
#include "tts/models/tacotron2/speaking/trained_model.h"

namespace tts::tacotron2 {

// The model `trained` holds (loaded for the CPU, in eval mode) decoding as `settings` say.
std::unique_ptr<models::SpeechDecoder> speech_decoder(TrainedModel trained,
                                                      const models::SpeechSettings& settings);

// The acoustic role's speech: the checkpoint's model loaded on the CPU.
std::unique_ptr<models::SpeechDecoder> speech_decoder(const models::TrainedCheckpoint& trained,
                                                      const models::SpeechSettings& settings);

}  // namespace tts::tacotron2
