// `tts-train train` below its command line: how a process that was asked to train takes part.
// Alone with --nproc-per-node N (N > 1) it becomes the launcher of N workers on this machine;
// otherwise it is one rank (alone, or started by torchrun, srun or the launcher), which judges
// the run folder, opens its logs, builds its communicator and trains.
#pragma once

#include <spdlog/common.h>

#include <optional>

#include "tts/config/config.h"
#include "tts/train/family.h"
#include "tts/train/run_folder.h"
#include "tts/train/trainer.h"

namespace tts::train {

// What --resume asked: nothing (a new run), continue from the latest checkpoint, or continue only
// when the run folder has one (restarts by torchrun or --max-restarts).
enum class ResumeMode { kNone, kLatest, kAuto };

struct LaunchRequest {
  config::Config config;
  TrainArgs train;  // its `resume` is decided here, from `resume`
  ResumeMode resume = ResumeMode::kNone;
  bool overwrite = false;
  int nproc_per_node = 0;  // 0: one per visible GPU, 1 on the CPU
  int max_restarts = 0;
  std::optional<config::Backend> backend;  // --backend over distributed.backend
  bool process_group = false;              // a real process group even for one rank
  spdlog::level::level_enum log_level = spdlog::level::info;  // resolved once by the command
  FamilyFactory make_family;                                  // the family config.model.kind names
};

// Launches the workers, or trains as one rank; returns the exit code (the launcher's is its
// workers'). Throws UsageError for a request that cannot run, tts::Error for a failure (on
// several ranks naming where every rank's log is).
int launch(LaunchRequest request);

}  // namespace tts::train
