// A run folder holds one run: `train --out RUN` starts a new run only in a folder that holds none,
// continues the one it holds (--resume), or moves it aside first (--overwrite). What counts as a
// run: checkpoints (RUN/checkpoints/step_*.pt) or metrics (a non-empty RUN/metrics.jsonl). A
// missing or empty folder, or one left by a run that never logged a step nor saved a checkpoint
// (config.yaml, train.log, logs/, empty plots/), holds none and is reused.
#pragma once

#include <string>
#include <vector>

namespace tts::train {

// What `train` does with a run folder that may hold a run.
enum class RunFolderUse {
  kNew,        // start a run: refused when the folder holds one
  kResume,     // continue the run it holds (--resume): nothing to judge here
  kOverwrite,  // start a run, moving the one it holds aside first (--overwrite)
};

// The files of `run_dir` that make it hold a run ("checkpoints/step_00000004.pt (and 2 more)",
// "metrics.jsonl"); empty when it holds none.
std::vector<std::string> previous_run_files(const std::string& run_dir);

// Decides once, before anything is written in `run_dir` (by the process that starts the ranks):
// kNew throws UsageError when the folder holds a run, naming what it holds and the ways forward;
// kOverwrite moves everything in it, but the runs moved aside before, into `run_dir`/previous-N
// (the first free N; nothing is deleted, links are moved, never followed) and returns that
// folder. Returns "" when nothing was moved.
std::string prepare_run_folder(const std::string& run_dir, RunFolderUse use);

}  // namespace tts::train
