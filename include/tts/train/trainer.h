// The training loop of any model family (family.h). One call per process (rank): the same code
// runs on 1 rank or many; the communicator decides. Rank 0 alone writes logs, metrics, plots,
// samples and checkpoints.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tts/config/config.h"
#include "tts/train/family.h"

namespace tts::dist {
class Communicator;
}

namespace tts::train {

struct TrainArgs {
  std::string data_dir;    // the feature store written by `tts-train preprocess`
  std::string run_dir;     // RUN/: config.yaml, metrics.jsonl, checkpoints/, plots/, samples/
  bool resume = false;     // continue from RUN/checkpoints/latest
  int64_t max_steps = -1;  // overrides train.max_steps when >= 0
  std::string init_from;   // warm start: weights of this checkpoint (ours or NVIDIA's), fresh step
  std::vector<std::string> init_skip;  // name prefixes init_from does not fill
};

// Trains the family `make_family` builds (models::family_factory(config.model.kind)) until
// train.max_steps / train.max_epochs or a stop request (SIGINT/SIGTERM, which ends the current
// step, checkpoints and returns 0). Throws tts::Error / UsageError on failure.
// `placement` is the one resolve_placement made `comm` with.
int train(const config::Config& config, const TrainArgs& args, dist::Communicator& comm,
          const dist::Placement& placement, const FamilyFactory& make_family);

// What every process that steps a family sets first, training or bench: the seed of
// initialization and dropout (train.seed), TF32 (train.tf32), and whether train.precision runs on
// `device` (refused with the reason where not).
void start_process(const config::Config& config, const torch::Device& device);

// Installs SIGINT/SIGTERM handlers that ask the training loop to stop after the current step.
void install_stop_handlers();
// True once a stop was requested (by a signal or request_stop()).
bool stop_requested();
void request_stop();

}  // namespace tts::train
