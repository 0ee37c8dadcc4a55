// The building blocks of Tacotron-2 (NVIDIA/tacotron2's model.py architecture, our own code), one
// header per part: the recurrent machinery, encoder, location-sensitive attention, prenet and
// decoder, postnet and the optional CBHG linear head (Rayhane-mamah/Tacotron-2). Tacotron2
// (network.h) assembles them.
#pragma once

#include "tts/models/tacotron2/layers/attention.h"
#include "tts/models/tacotron2/layers/cbhg.h"
#include "tts/models/tacotron2/layers/decoder.h"
#include "tts/models/tacotron2/layers/encoder.h"
#include "tts/models/tacotron2/layers/postnet.h"
#include "tts/models/tacotron2/layers/recurrent.h"
