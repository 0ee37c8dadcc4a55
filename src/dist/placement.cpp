#include "tts/dist/placement.h"

#include <torch/torch.h>

#include "tts/core/error.h"
#include "tts/dist/communicator.h"

namespace tts::dist {

Placement resolve_placement(const RankInfo& rank, config::Device device, config::Backend backend,
                            bool pin_memory) {
  Placement placement;
  placement.backend = resolve_backend(backend, device);
#ifndef TTS_WITH_CUDA
  TTS_USAGE_CHECK(placement.backend != config::Backend::kNccl,
                  "dist: backend nccl needs a CUDA build of tts-train (this libtorch has no "
                  "CUDA); use --backend gloo");
#endif
  placement.device = rank_device(rank, device, placement.backend);
  placement.pin_memory = pin_memory && placement.device.is_cuda();
  return placement;
}

Placement resolve_placement(const config::Config& config, const RankInfo& rank,
                            std::optional<config::Backend> backend_flag) {
  const config::Backend backend = backend_flag ? *backend_flag
                                  : config.train.device == config::Device::kCpu
                                      ? config::Backend::kGloo
                                      : config.distributed.backend;
  return resolve_placement(rank, config.train.device, backend, config.data.pin_memory);
}

}  // namespace tts::dist
