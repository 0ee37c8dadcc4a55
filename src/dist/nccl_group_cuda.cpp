// The NCCL process group; built only where libtorch has CUDA (TTS_WITH_CUDA).
// c10d's NCCL header is empty unless USE_C10D_NCCL is defined; libtorch_cuda's CMake target may
// not define it (pytorch/pytorch#65918), and every CUDA libtorch has NCCL built in.
#ifndef USE_C10D_NCCL
#define USE_C10D_NCCL
#endif

#include <c10/cuda/CUDAFunctions.h>
#include <nccl.h>
#include <torch/csrc/cuda/nccl.h>

#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

#include "nccl_group.h"
#include "tts/core/error.h"
#include "tts/dist/communicator.h"

namespace tts::dist {

void check_nccl_headers() {
  // torch::cuda::nccl::version() is the NCCL_MAJOR/MINOR/PATCH libtorch was compiled with,
  // packed as major << 32 | minor << 16 | patch.
  const std::uint64_t torch_version = torch::cuda::nccl::version();
  const std::uint64_t ours = (static_cast<std::uint64_t>(NCCL_MAJOR) << 32) |
                             (static_cast<std::uint64_t>(NCCL_MINOR) << 16) |
                             static_cast<std::uint64_t>(NCCL_PATCH);
  TTS_CHECK(torch_version == ours,
            "dist: tts-train was compiled against nccl.h {}.{}.{} but libtorch was built with "
            "NCCL {}.{}.{}: ProcessGroupNCCL's options would have another layout than libtorch's. "
            "Rebuild with -DNCCL_INCLUDE_DIR pointing at NCCL {}.{}.{}'s headers",
            NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH, torch_version >> 32, (torch_version >> 16) & 0xffff,
            torch_version & 0xffff, torch_version >> 32, (torch_version >> 16) & 0xffff,
            torch_version & 0xffff);
}

compat::GroupPtr make_nccl_group(const compat::StorePtr& store, int rank, int size, int local_rank,
                                 double timeout_s) {
  check_nccl_headers();
  c10::cuda::set_device(static_cast<c10::DeviceIndex>(local_rank));
  compat::configure_nccl_error_handling();
  auto opts = c10d::ProcessGroupNCCL::Options::create();
  opts->timeout = compat::to_ms(timeout_s);
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, size, opts);
}

}  // namespace tts::dist
