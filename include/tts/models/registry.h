// model.kind -> what its family registers: the trainer's factory (train/family.h) and inspect's
// summary of a checkpoint. Adding a model family is one folder, src/models/<kind>/ (with
// include/tts/models/<kind>/), a ModelKind name in config/model_options.h, and one line in
// registry.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
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

// The synthetic batch `tts-train bench` steps: `batch` utterances; a text-reading family's of
// `text_len` symbols from a table of `symbols`; `frames` output mel frames each (0: the
// family's own default: 600 for Tacotron-2, a vocoder's training window).
struct BenchShape {
  int64_t batch = 1;
  int64_t text_len = 120;
  int64_t frames = 0;
  int64_t symbols = 148;
};

// What bench steps: a family without a store (no batch source, no validation) in `phase`, and one
// synthetic batch on the rank's device, with what the bench reports of its size.
struct BenchSubject {
  std::unique_ptr<train::Family> family;
  std::unique_ptr<train::FamilyBatch> batch;
  data::Phase phase;
  int64_t frames = 0;     // mel frames per utterance the step computes (padding to r included)
  int64_t text_len = 0;   // symbols per utterance; 0 for a family without text input
  int64_t samples = 0;    // waveform samples per utterance; 0 for a family without audio output
  double step_gflop = 0;  // a training step's arithmetic counted from the shapes; 0: not counted
  // The family's own fields of bench's JSON line, in order: a name and its value, quoted as a
  // string when `text` (Tacotron-2's frames_per_step and step_products path).
  struct Field {
    std::string name;
    std::string value;
    bool text = false;
  };
  std::vector<Field> fields;
};

using BenchFactory = std::function<BenchSubject(const train::FamilyContext&, const BenchShape&)>;

struct FamilyEntry {
  train::FamilyFactory make;
  std::function<CheckpointSummary(const checkpoint::Checkpoint&, const config::Config&)>
      summarize_checkpoint;
  // bench's subject; the context's data_dir, run_dir and initial_phase are unused.
  BenchFactory bench;
};

// The family model.kind names. Throws tts::Error for a kind with no registration.
const FamilyEntry& family(config::ModelKind kind);

inline train::FamilyFactory family_factory(config::ModelKind kind) { return family(kind).make; }

}  // namespace tts::models
