// model.kind -> what its family registers: the trainer's factory (train/family.h) and inspect's
// summary of a checkpoint. Adding a model family is one folder, src/models/<kind>/ (with
// include/tts/models/<kind>/), a ModelKind name in config/model_options.h, and one line in
// registry.cpp.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tts/checkpoint/checkpoint.h"
#include "tts/config/config.h"
#include "tts/train/family.h"

namespace tts::models {

// What `tts-train inspect` shows of a family's checkpoint beyond what every checkpoint has
// (step, world size, batch, audio settings, metrics, tensors).
struct CheckpointSummary {
  // Text lines, "model        r=2, encoder 512, ...": (label, text).
  std::vector<std::pair<std::string, std::string>> lines;
  // Fields of --json's object: (name, a JSON value already formatted).
  std::vector<std::pair<std::string, std::string>> json_fields;
};

struct FamilyEntry {
  train::FamilyFactory make;
  std::function<CheckpointSummary(const checkpoint::Checkpoint&, const config::Config&)>
      summarize_checkpoint;
};

// The family model.kind names. Throws tts::Error for a kind with no registration.
const FamilyEntry& family(config::ModelKind kind);

inline train::FamilyFactory family_factory(config::ModelKind kind) { return family(kind).make; }

}  // namespace tts::models
