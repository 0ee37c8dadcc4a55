// What `tts-train inspect` shows of a checkpoint, for comparing runs: its step, ranks and batch,
// audio settings, the family's own lines (FamilyEntry::summarize_checkpoint), symbols, speakers,
// the last validation's metrics, the config as trained and every tensor's shape and L2 norm; as
// aligned text or as one JSON object.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tts/checkpoint/checkpoint.h"
#include "tts/config/config.h"
#include "tts/models/registry.h"

namespace tts::models {

struct CheckpointReport {
  std::string path;  // as given
  std::string file;  // the checkpoint file it resolved to (a run folder's newest, latest's target)
  checkpoint::Checkpoint checkpoint;
  config::Config config;
  CheckpointSummary summary;
  std::vector<config::FieldValue> fields;  // the config's, every key
  int64_t parameter_count = 0;             // the trained parameters' values
};

// Reads the checkpoint at `path` (a file, RUN/checkpoints/latest, a run or checkpoints folder)
// and its config. Throws tts::Error naming the file.
CheckpointReport inspect_checkpoint(const std::string& path);

std::string report_text(const CheckpointReport& report);
std::string report_json(const CheckpointReport& report);  // one line, with its newline

}  // namespace tts::models
