// Test helper: runs a function as `world` real processes (fork, no exec) that see the torchrun
// environment, as Gloo ranks on loopback. Fork before any torch thread pool exists: the parent
// test process must not run torch operations itself.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <torch/utils.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "tts/dist/communicator.h"
#include "tts/dist/launcher.h"

namespace tts::dist::testing {

// Exit code of a rank whose body threw; 0 when the body returned and no gtest assertion failed.
constexpr int kThrew = 42;

// Runs body(rank) in `world` child processes; returns each rank's exit code (128 + signal when
// killed). A rank still running after `limit_s` is killed (and reported as 128 + SIGKILL), and so
// is rank `straggler` (>= 0) once all the others have exited, as a launcher ends a stopped rank.
inline std::vector<int> run_ranks(int world, const std::function<void(int)>& body,
                                  double limit_s = 120.0, int straggler = -1) {
  const int port = pick_free_port("127.0.0.1");
  std::vector<pid_t> pids;
  for (int rank = 0; rank < world; ++rank) {
    const pid_t pid = fork();
    if (pid == 0) {
      setenv("RANK", std::to_string(rank).c_str(), 1);
      setenv("WORLD_SIZE", std::to_string(world).c_str(), 1);
      setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
      setenv("LOCAL_WORLD_SIZE", std::to_string(world).c_str(), 1);
      setenv("MASTER_ADDR", "127.0.0.1", 1);
      setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      int code = 0;
      try {
        body(rank);
        code = ::testing::Test::HasFailure() ? 1 : 0;
      } catch (const std::exception& e) {
        fprintf(stderr, "rank %d threw: %s\n", rank, e.what());
        code = kThrew;
      }
      fflush(stdout);
      fflush(stderr);
      _exit(code);
    }
    pids.push_back(pid);
  }
  std::vector<int> codes(world, -1);
  const auto start = std::chrono::steady_clock::now();
  int left = world;
  while (left > 0) {
    for (int r = 0; r < world; ++r) {
      if (codes[r] != -1) continue;
      int status = 0;
      if (waitpid(pids[r], &status, WNOHANG) == pids[r]) {
        codes[r] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        --left;
      }
    }
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (left == 1 && straggler >= 0 && codes[straggler] == -1) kill(pids[straggler], SIGKILL);
    if (left > 0 && elapsed > limit_s) {
      for (int r = 0; r < world; ++r) {
        if (codes[r] == -1) kill(pids[r], SIGKILL);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return codes;
}

// In a rank of run_ranks: a Gloo communicator with distributed.timeout_s = `timeout_s`, after the
// first all-reduce of `t` (every rank is in the group), on one torch thread.
inline std::unique_ptr<Communicator> gloo_rank_after_one_all_reduce(double timeout_s,
                                                                    std::vector<torch::Tensor>& t) {
  torch::set_num_threads(1);
  config::DistributedOptions options;
  options.timeout_s = timeout_s;
  auto comm = make_communicator(RankInfo::from_env(), options, tts::config::Backend::kGloo);
  comm->all_reduce_sum(t);
  return comm;
}

}  // namespace tts::dist::testing
