// Where and how a rank runs: its device, the collective backend, whether its batches are pinned.
// Decided once, here, from the config and the rank (and a --backend flag), and passed down to the
// communicator, the loader and the model family; nothing below decides it again.
#pragma once

#include <torch/types.h>

#include <optional>

#include "tts/config/config.h"
#include "tts/dist/rank_info.h"

namespace tts::dist {

struct Placement {
  torch::Device device{torch::kCPU};
  config::Backend backend = config::Backend::kGloo;  // resolved: gloo or nccl, never auto
  bool pin_memory = false;                           // data.pin_memory, on a CUDA device
};

// The rule, in one place:
//   backend: `backend_flag` if given; else gloo when train.device is cpu (a config written for
//            GPUs trains on the CPU with train.device: cpu alone); else distributed.backend;
//            auto is nccl on CUDA, gloo on the CPU (resolve_backend);
//   device:  rank_device(rank, train.device, backend): cuda:local_rank, GPUs shared round robin
//            with gloo when the node has fewer, refused with nccl;
//   pinning: data.pin_memory when the device is CUDA.
// Throws UsageError for a device or backend this build or node cannot give.
Placement resolve_placement(const config::Config& config, const RankInfo& rank,
                            std::optional<config::Backend> backend_flag = std::nullopt);

// The same rule from its parts, for callers without a config (bench, tests, the self-test).
Placement resolve_placement(const RankInfo& rank, config::Device device, config::Backend backend,
                            bool pin_memory = false);

}  // namespace tts::dist
