// A trained model loaded once for inference: the checkpoint file, the config it was trained with,
// the phase in force when it was written, and the model on its device in eval mode, with the
// math settings (train.tf32, model.recurrent_products) its config says. the acoustic role's
// synthesize and gta (synthesize.h, gta.h) load through here.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tts/config/config.h"
#include "tts/data/phase.h"
#include "tts/models/roles.h"
#include "tts/models/tacotron2/layers/network.h"

namespace tts::tacotron2 {

struct TrainedModel {
  std::string source;  // the checkpoint file read
  config::Config config;
  data::Phase phase;  // r and per-rank batch in force when it was written
  int64_t step = 0;
  tacotron2::Tacotron2 model{nullptr};
  // The checkpoint's speaker table (names in row order); empty for a one-speaker model.
  std::vector<std::string> speakers;
};

// The speaker embedding row of `name` for the model of `config` trained with the speaker table
// `table` (Checkpoint::speakers), read from `source`: -1 for a one-speaker model. Throws UsageError
// when a one-speaker model is given a speaker, or a model of several speakers is given none or a
// name outside its table (listing its speakers); a model of one named speaker takes "" as that one
// (the choice by name is models::speaker_row_by_name's).
int64_t speaker_row(const config::Config& config, const std::vector<std::string>& table,
                    const std::string& name, const std::string& source);

// Reads the newest readable checkpoint at `path` (a file, RUN/checkpoints/latest, a checkpoints
// folder or a run folder), builds the model of its config (model.kind) for its r on `device` and
// fills it. Throws tts::Error naming the file and what does not fit.
TrainedModel load_trained_model(const std::string& path, const torch::Device& device);

// The same from a checkpoint already read (models::read_trained).
TrainedModel trained_model(const models::TrainedCheckpoint& trained, const torch::Device& device);

}  // namespace tts::tacotron2
