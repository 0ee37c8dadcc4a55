// The NCCL process group; built only where libtorch has CUDA (TTS_WITH_CUDA).
#include <c10/cuda/CUDAFunctions.h>

#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

#include "nccl_group.h"

namespace tts::dist {

compat::GroupPtr make_nccl_group(const compat::StorePtr& store, int rank, int size, int local_rank,
                                 double timeout_s) {
  c10::cuda::set_device(static_cast<c10::DeviceIndex>(local_rank));
  compat::enable_nccl_async_error_handling();
  auto opts = c10d::ProcessGroupNCCL::Options::create();
  opts->timeout = compat::to_ms(timeout_s);
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, size, opts);
}

}  // namespace tts::dist
