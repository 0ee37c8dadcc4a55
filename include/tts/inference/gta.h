// `tts-train gta` below its command line: ground-truth-aligned mels of a feature store, computed
// by the checkpoint's family (its acoustic role, models/roles.h), alone or by N worker processes
// on this machine that split the utterances (no communication: each writes its own files).
#pragma once

#include <spdlog/common.h>

#include "tts/models/roles.h"

namespace tts::inference {

struct GtaLaunch {
  models::GtaRequest request;  // its rank fields are this process's, set here
  int nproc_per_node = 1;      // > 1 (and not already a worker): launch that many workers
  spdlog::level::level_enum log_level = spdlog::level::info;  // resolved once by the command
};

// Launches the workers, or computes this process's share; returns the exit code. Throws
// UsageError for a checkpoint whose family has no acoustic role.
int gta(GtaLaunch launch);

}  // namespace tts::inference
