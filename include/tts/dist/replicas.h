// Keeping the replicas of a data-parallel job identical: rank 0's state is broadcast at start,
// checksums catch drift during training, and a config fingerprint catches ranks started with
// different configs.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>

#include "tts/dist/communicator.h"

namespace torch::nn {
class Module;
}

namespace tts::dist {

// Overwrites every parameter and buffer of `module` with rank 0's values (in registration
// order; every rank must have built the same module).
void broadcast_parameters(torch::nn::Module& module, Communicator& comm);

// Compares per-parameter checksums (sum and sum of squares, in double) across ranks; throws
// tts::Error at `step` naming the first parameter that differs and the ranks that disagree.
void check_replicas(torch::nn::Module& module, Communicator& comm, int64_t step);

// Compares a fingerprint of the resolved config (e.g. a hash of its YAML dump) across ranks;
// throws UsageError naming the ranks whose config differs from rank 0's.
void check_same_config(const std::string& fingerprint, Communicator& comm);

}  // namespace tts::dist
