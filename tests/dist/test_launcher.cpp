// The built-in launcher, through the real executable: `tts-train dist-selftest --nproc-per-node N`
// runs N workers that all-reduce; options make one of them fail.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

namespace {

struct Result {
  int exit_code = -1;
  std::string output;  // stdout and stderr, interleaved
};

// Runs `tts-train ARGS`; when `signal_after` is non-empty, sends SIGTERM to the launcher once the
// output contains it.
Result run_cli(const std::vector<std::string>& args, const std::string& signal_after = "",
               double limit_s = 120) {
  int out[2];
  EXPECT_EQ(pipe(out), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    dup2(out[1], STDERR_FILENO);
    close(out[0]);
    close(out[1]);
    std::vector<char*> argv{const_cast<char*>(TTS_CLI_PATH)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(out[1]);
  Result result;
  bool signalled = false;
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    pollfd fd{out[0], POLLIN, 0};
    poll(&fd, 1, 100);
    if (fd.revents) {
      char buffer[4096];
      const ssize_t n = read(out[0], buffer, sizeof(buffer));
      if (n <= 0) break;
      result.output.append(buffer, static_cast<size_t>(n));
    }
    if (!signal_after.empty() && !signalled &&
        result.output.find(signal_after) != std::string::npos) {
      kill(pid, SIGTERM);
      signalled = true;
    }
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > limit_s) {
      kill(pid, SIGKILL);
      ADD_FAILURE() << "the launcher did not finish within " << limit_s << " s";
      break;
    }
  }
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(Launcher, RunsWorkersWithTheirRankPrefixedToEveryLine) {
  Result r = run_cli({"dist-selftest", "--nproc-per-node", "3", "--rounds", "2"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (int rank = 0; rank < 3; ++rank) {
    for (int round = 0; round < 2; ++round) {
      EXPECT_TRUE(contains(r.output, "[rank " + std::to_string(rank) + "] round " +
                                         std::to_string(round) + " sum 6 ok"))
          << r.output;
    }
  }
}

TEST(Launcher, FailingWorkerStopsTheOthersAndItsExitCodeIsPropagated) {
  Result r = run_cli({"dist-selftest", "--nproc-per-node", "3", "--rounds", "50", "--fail-rank",
                      "1", "--fail-mode", "exit", "--timeout", "5"});
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_TRUE(contains(r.output, "rank 1 exited with code 3 (the first to fail")) << r.output;
  EXPECT_TRUE(contains(r.output, "[rank 1] rank 1 failing (exit)")) << r.output;
}

TEST(Launcher, KilledWorkerIsReportedWithItsSignal) {
  Result r = run_cli({"dist-selftest", "--nproc-per-node", "2", "--rounds", "50", "--fail-rank",
                      "0", "--fail-mode", "kill", "--timeout", "5"});
  EXPECT_EQ(r.exit_code, 128 + SIGKILL) << r.output;
  EXPECT_TRUE(contains(r.output, "rank 0 was killed by signal 9")) << r.output;
}

TEST(Launcher, HangingWorkerIsStoppedAfterTheOthersTimeOutNamingIt) {
  Result r = run_cli({"dist-selftest", "--nproc-per-node", "2", "--rounds", "50", "--fail-rank",
                      "1", "--fail-mode", "hang", "--timeout", "3"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "[rank 0]")) << r.output;
  EXPECT_TRUE(contains(r.output, "rank 1 still alive but behind")) << r.output;
  EXPECT_TRUE(contains(r.output, "rank 0 exited with code 1 (the first to fail")) << r.output;
}

TEST(Launcher, SigtermIsForwardedAndWorkersStopTogetherWithExitCode0) {
  Result r =
      run_cli({"dist-selftest", "--nproc-per-node", "2", "--until-signal"}, "[rank 1] round 2 ");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "[rank 0] stopping after a signal")) << r.output;
  EXPECT_TRUE(contains(r.output, "[rank 1] stopping after a signal")) << r.output;
}

}  // namespace
