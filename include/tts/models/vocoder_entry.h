// What every vocoder family registers the same way (models/registry.h): training, bench and
// inspect; the size check of its networks, counted from the config, against the budget and the
// weights a checkpoint holds; and its roles after training: vocoder, one converter, forward.
#pragma once

#include <functional>

#include "tts/models/registry.h"

namespace tts::models {

struct VocoderParts {
  train::FamilyFactory make;
  std::function<CheckpointSummary(const checkpoint::Checkpoint&, const config::Config&)>
      summarize_checkpoint;
  train::BenchFactory bench;
  std::function<double(const config::Config&)> parameter_count;  // its networks', from the config
  const char* sizing_keys;  // the config keys that size them, for the size check's message
  VocoderLoader load_vocoder;
  Converter converter;  // the peer's files in and out
  ForwardRole forward;
  report::RunContents report;
};

FamilyEntry vocoder_entry(VocoderParts parts);

}  // namespace tts::models
