// Where a rank's tensors live (one source of truth: the communicator's device), the liveness
// barrier that lets one rank work alone past distributed.timeout_s, a real process group for one
// rank, and the NCCL header check of CUDA builds.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <csignal>
#include <thread>

#include "fork_ranks.h"
#include "tts/core/error.h"
#include "tts/dist/communicator.h"

namespace tts::dist {
namespace {

using testing::kThrew;
using testing::run_ranks;

TEST(RankDevice, CpuAndAutoWithoutCuda) {
  RankInfo info;
  info.local_rank = 1;
  info.local_world_size = 2;
  EXPECT_EQ(rank_device(info, tts::config::Device::kCpu, tts::config::Backend::kGloo),
            torch::Device(torch::kCPU));
  if (torch::cuda::is_available()) {
    const int gpus = static_cast<int>(torch::cuda::device_count());
    EXPECT_EQ(rank_device(info, tts::config::Device::kAuto, tts::config::Backend::kGloo),
              torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(1 % gpus)));
  } else {
    EXPECT_EQ(rank_device(info, tts::config::Device::kAuto, tts::config::Backend::kGloo),
              torch::Device(torch::kCPU));
    EXPECT_THROW(rank_device(info, tts::config::Device::kCuda, tts::config::Backend::kGloo),
                 UsageError);
    EXPECT_THROW(rank_device(info, tts::config::Device::kAuto, tts::config::Backend::kNccl),
                 UsageError);
  }
  EXPECT_THROW(rank_device(info, tts::config::Device::kCpu, tts::config::Backend::kNccl),
               UsageError);
}

TEST(RankDevice, TheCommunicatorsDeviceIsTheRanks) {
  config::DistributedOptions options;
  RankInfo info;
  auto comm =
      make_communicator(info, options, tts::config::Backend::kGloo, tts::config::Device::kAuto);
  EXPECT_EQ(comm->device(),
            rank_device(info, tts::config::Device::kAuto, tts::config::Backend::kGloo));
}

TEST(Communicator, OneRankCanUseARealProcessGroup) {
  config::DistributedOptions options;
  options.timeout_s = 10;
  auto comm =
      make_communicator(RankInfo{}, options, tts::config::Backend::kGloo, tts::config::Device::kCpu,
                        /*process_group_for_one_rank=*/true);
  EXPECT_EQ(comm->backend(), "gloo");
  EXPECT_EQ(comm->size(), 1);
  std::vector<torch::Tensor> t{torch::full({3}, 2.0)};
  comm->all_reduce_sum(t);
  EXPECT_TRUE(t[0].equal(torch::full({3}, 2.0)));
  EXPECT_EQ(comm->all_gather({5.0}), std::vector<double>{5.0});
  comm->wait_for_all("one rank");
}

TEST(Communicator, NcclHeadersMatchLibtorch) {
  // CUDA builds compare the nccl.h they were compiled with against libtorch's NCCL; no GPU needed.
  EXPECT_NO_THROW(check_nccl_headers());
}

// Long enough for a rendezvous on a loaded test machine, short enough to be outlasted below.
constexpr double kTimeout = 4.0;

// Rank 0 works alone for twice the collective timeout (a long validation, a slow checkpoint);
// the others wait for it in wait_for_all and the next collective succeeds on every rank.
TEST(WaitForAll, OneRankMayWorkAlonePastTheTimeout) {
  auto codes = run_ranks(3, [](int rank) {
    torch::set_num_threads(1);
    config::DistributedOptions options;
    options.timeout_s = kTimeout;
    auto comm = make_communicator(RankInfo::from_env(), options, tts::config::Backend::kGloo);
    for (int round = 0; round < 2; ++round) {
      if (rank == 0 && round == 0) {
        std::this_thread::sleep_for(std::chrono::duration<double>(2 * kTimeout));
      }
      comm->wait_for_all("validation");
      std::vector<double> all = comm->all_gather({static_cast<double>(rank + round)});
      EXPECT_EQ(all, (std::vector<double>{0.0 + round, 1.0 + round, 2.0 + round}));
    }
  });
  for (int r = 0; r < 3; ++r) EXPECT_EQ(codes[r], 0) << "rank " << r;
}

// A rank that dies while the others wait ends the wait with its name, never a hang.
TEST(WaitForAll, ARankThatDiesMeanwhileIsNamed) {
  auto codes = run_ranks(
      3,
      [](int rank) {
        torch::set_num_threads(1);
        config::DistributedOptions options;
        options.timeout_s = kTimeout;
        auto comm = make_communicator(RankInfo::from_env(), options, tts::config::Backend::kGloo);
        comm->all_gather({1.0});
        if (rank == 2) std::raise(SIGKILL);
        try {
          comm->wait_for_all("checkpoint");
          ADD_FAILURE() << "rank " << rank << ": the wait did not fail";
        } catch (const Error& e) {
          const std::string message = e.what();
          EXPECT_NE(message.find("lost rank 2"), std::string::npos) << message;
          EXPECT_NE(message.find("checkpoint failed on rank " + std::to_string(rank)),
                    std::string::npos)
              << message;
          throw;
        }
      },
      /*limit_s=*/30);
  EXPECT_EQ(codes[2], 128 + SIGKILL);
  EXPECT_EQ(codes[0], kThrew);
  EXPECT_EQ(codes[1], kThrew);
}

}  // namespace
}  // namespace tts::dist

TEST(ResolveBackend, AutoIsGlooOnTheCpuAndAnExplicitBackendStays) {
  using tts::config::Backend;
  using tts::config::Device;
  EXPECT_EQ(tts::dist::resolve_backend(Backend::kAuto, Device::kCpu), Backend::kGloo);
  EXPECT_EQ(tts::dist::resolve_backend(Backend::kGloo, Device::kCuda), Backend::kGloo);
  EXPECT_EQ(tts::dist::resolve_backend(Backend::kNccl, Device::kCpu), Backend::kNccl);
  const bool cuda = torch::cuda::is_available();
#ifdef TTS_WITH_CUDA
  const Backend on_gpu = cuda ? Backend::kNccl : Backend::kGloo;
#else
  const Backend on_gpu = Backend::kGloo;
  (void)cuda;
#endif
  EXPECT_EQ(tts::dist::resolve_backend(Backend::kAuto, Device::kAuto), on_gpu);
}
