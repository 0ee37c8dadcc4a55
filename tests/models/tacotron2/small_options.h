// The small Tacotron-2 of the model tests: layer sizes that run in milliseconds on a CPU, shared by
// test_network.cpp and test_speakers.cpp, which set what they test on top (r, linear outputs,
// speakers, decoder steps).
#pragma once

#include "tts/config/config.h"

namespace tacotron2_test {

inline tts::config::ModelOptions small_options() {
  tts::config::ModelOptions o;
  o.symbols_embedding_dim = 16;
  o.encoder_embedding_dim = 16;
  o.encoder_n_convolutions = 2;
  o.decoder_rnn_dim = 24;
  o.attention_rnn_dim = 20;
  o.prenet_dim = 8;
  o.attention_dim = 10;
  o.attention_location_n_filters = 4;
  o.attention_location_kernel_size = 7;
  o.postnet_embedding_dim = 16;
  o.postnet_n_convolutions = 3;
  return o;
}

}  // namespace tacotron2_test
