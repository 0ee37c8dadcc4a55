// The building blocks of Tacotron-2 (NVIDIA/tacotron2's model.py architecture, our own code), one
// header per part: the recurrent machinery, encoder, location-sensitive attention, prenet and
// decoder, postnet and the optional CBHG linear head (Rayhane-mamah/Tacotron-2). Tacotron2
// (network.h) assembles them.
#pragma once

#include "tts/models/tacotron2/attention.h"
#include "tts/models/tacotron2/cbhg.h"
#include "tts/models/tacotron2/decoder.h"
#include "tts/models/tacotron2/encoder.h"
#include "tts/models/tacotron2/postnet.h"
#include "tts/models/tacotron2/recurrent.h"
