// A rank stopped with SIGSTOP (as a wedged driver or a paused VM leaves it) answers nothing, not
// even the rendezvous store that rank 0 hosts: the other ranks must end by themselves within a
// bounded time, naming it, whichever rank stopped. Real Gloo ranks on loopback.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <sstream>

#include "../support/scratch.h"
#include "fork_ranks.h"
#include "tts/dist/communicator.h"

namespace tts::dist {
namespace {

using testing::kThrew;
using testing::run_ranks;

constexpr double kTimeout = 3.0;

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Outcome {
  std::vector<int> codes;
  std::vector<std::string> logs;  // each rank's stderr
  double seconds = 0;
};

// Two ranks all-reduce once; then `victim` stops itself with SIGSTOP and the other all-reduces
// again, which must not return. The stopped rank is killed once the other has exited.
Outcome stop_a_rank(int victim) {
  const std::string dir = tts::test::fresh_dir("stopped_rank_" + std::to_string(victim));
  const auto start = std::chrono::steady_clock::now();
  Outcome outcome;
  outcome.codes = run_ranks(
      2,
      [=](int rank) {
        const std::string log = dir + "/rank_" + std::to_string(rank) + ".log";
        const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(fd, STDERR_FILENO);
        ::close(fd);
        std::vector<torch::Tensor> t{torch::ones({1000})};
        auto comm = testing::gloo_rank_after_one_all_reduce(kTimeout, t);
        if (rank == victim) {
          std::raise(SIGSTOP);
          _exit(7);  // never: the test kills it while stopped
        }
        comm->all_reduce_sum(t);
        ADD_FAILURE() << "rank " << rank << ": the all-reduce returned without rank " << victim;
      },
      /*limit_s=*/60, /*straggler=*/victim);
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (int rank = 0; rank < 2; ++rank) {
    outcome.logs.push_back(read(dir + "/rank_" + std::to_string(rank) + ".log"));
  }
  return outcome;
}

TEST(StoppedRanks, AStoppedStoreHostIsNamedByTheOtherRank) {
  // Rank 0 hosts the TCPStore: its store calls never return. The deadline on every store call
  // ends rank 1 with exit code 1 and a message naming rank 0 and the store's address.
  const Outcome outcome = stop_a_rank(0);
  EXPECT_EQ(outcome.codes[0], 128 + SIGKILL);
  EXPECT_EQ(outcome.codes[1], 1) << outcome.logs[1];
  EXPECT_NE(outcome.logs[1].find("rank 0 is silent"), std::string::npos) << outcome.logs[1];
  EXPECT_NE(outcome.logs[1].find("TCPStore at 127.0.0.1:"), std::string::npos) << outcome.logs[1];
  EXPECT_NE(outcome.logs[1].find("--resume auto"), std::string::npos) << outcome.logs[1];
  // Behaviour, not speed: rank 1 ended by itself, long before the test's limit of 60 s.
  EXPECT_LT(outcome.seconds, 40.0);
}

TEST(StoppedRanks, AStoppedRankIsNamedByTheStoreHost) {
  // Rank 0's all-reduce times out in Gloo and the heartbeat diagnosis names rank 1.
  const Outcome outcome = stop_a_rank(1);
  EXPECT_EQ(outcome.codes[1], 128 + SIGKILL);
  EXPECT_EQ(outcome.codes[0], kThrew) << outcome.logs[0];
  EXPECT_NE(outcome.logs[0].find("lost rank 1: no heartbeat"), std::string::npos)
      << outcome.logs[0];
  EXPECT_NE(outcome.logs[0].find("failed on rank 0"), std::string::npos) << outcome.logs[0];
  EXPECT_LT(outcome.seconds, 40.0);
}

}  // namespace
}  // namespace tts::dist
