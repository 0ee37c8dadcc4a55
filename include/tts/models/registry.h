// model.kind -> what its family registers: the trainer's factory (train/family.h), inspect's
// summary of a checkpoint, bench's subject, the size check of a config read from a file, and its
// roles after training (models/roles.h): vocoder, acoustic model, converters, forward. Each
// family fills its FamilyEntry in its own folder (`entry()`); src/models/registry.cpp lists them,
// one line each. Adding a model family is one folder, src/models/<kind>/ (with
// include/tts/models/<kind>/), its name and config section in models/family_sections.h, and one
// line in registry.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tts/checkpoint/checkpoint.h"
#include "tts/config/config.h"
#include "tts/models/roles.h"
#include "tts/report/run_report.h"
#include "tts/train/bench.h"
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
  // bench's subject; the context's data_dir, run_dir and initial_phase are unused.
  train::BenchFactory bench;
  // Throws tts::Error when the config of checkpoint `source` asks for a network past the
  // family's ceilings, or for more weights than the `stored_values` tensor elements the file
  // holds; run before anything is built (config_of). Empty: nothing to check.
  std::function<void(const config::Config& config, int64_t stored_values,
                     const std::string& source)>
      check_size;
  // The roles after training; empty where the family does not play one.
  VocoderLoader load_vocoder;
  AcousticRole acoustic;
  std::vector<Converter> converters;
  ForwardRole forward;
  // What the run report shows of a run of the family: its metrics, plots and samples.
  report::RunContents report;
};

// Every model.kind, in the order its names are listed (config's ModelKind).
const std::vector<config::ModelKind>& kinds();

// The family model.kind names. Throws tts::Error for a kind with no registration.
const FamilyEntry& family(config::ModelKind kind);

// The config a checkpoint holds (checkpoint::checkpoint_config), checked against its family's
// ceilings before anything is built. Throws tts::Error naming `source`.
config::Config config_of(const checkpoint::Checkpoint& checkpoint, const std::string& source);

// The newest readable checkpoint at `path` (a file, RUN/checkpoints/latest, a checkpoints folder or
// a run folder) with its config (config_of): by default the weights and settings only, what
// speaking needs (checkpoint::CheckpointRead).
TrainedCheckpoint read_trained(const std::string& path, checkpoint::CheckpointRead read =
                                                            checkpoint::CheckpointRead::kWeights);

// A trained vocoder from `path` on `device`, in eval mode. Throws UsageError for a checkpoint of a
// family that does not vocode (naming where it goes instead), tts::Error for one that does not
// load.
std::unique_ptr<Vocoder> load_vocoder(const std::string& path, const torch::Device& device);

// The converter of --from/--to `format`. Throws UsageError listing the formats for another name.
const Converter& converter(const std::string& format);
// Every format a family converts, with the kind of the family that converts it.
std::vector<std::pair<std::string, config::ModelKind>> converter_formats();

inline train::FamilyFactory family_factory(config::ModelKind kind) { return family(kind).make; }

}  // namespace tts::models
