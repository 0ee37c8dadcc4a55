// A hung rank through the CLI: a worker stopped with SIGSTOP mid-run (as a wedged driver or a
// paused VM leaves it) answers nothing, not even the rendezvous store rank 0 hosts. The job must
// end by itself with a non-zero exit code and a message naming the silent rank, the launcher
// (the built-in one, or torchrun) must end the stopped worker too, and --resume auto continues
// from the last checkpoint.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "background_run.h"
#include "torchrun.h"
#include "train_fixture.h"
#include "tts/core/fs.h"

namespace fs = std::filesystem;

namespace {

// distributed.timeout_s small enough for a quick test, large enough for a step on a busy machine.
const std::string kOptions =
    " --max-steps 100000 --set train.checkpoint_interval=2 --set train.val_interval=100000"
    " --set logging.samples=false --set distributed.timeout_s=5";

class HungRanks : public tts::test::TrainFixture {
 protected:
  // Runs `LAUNCHER tts-train train ... LAUNCHER_OPTIONS` into RUN, stops rank `victim` with SIGSTOP
  // once the checkpoint of step 2 exists, and waits for the job to end; returns its output.
  std::string stop_a_worker(const std::string& run, int victim, const std::string& launcher,
                            const std::string& launcher_options) {
    const std::string log = root_ + "/" + run + ".log";
    const std::string command = launcher + " " + TTS_CLI_PATH + " train --config " +
                                tts::test::kTiny + " --data " + feats_ + " --out " + root_ + "/" +
                                run + kOptions + launcher_options;
    tts::test::BackgroundRun job(command, log);
    EXPECT_TRUE(tts::test::wait_for_file(root_ + "/" + run + "/checkpoints/step_00000002.pt", 300))
        << tts::read_file(log);
    std::vector<pid_t> worker;
    for (int tries = 0; worker.empty() && tries < 50; ++tries) {
      worker = tts::test::children_with_rank(job.pid(), victim);
      if (worker.empty()) usleep(100000);
    }
    EXPECT_EQ(worker.size(), 1u) << "no rank " << victim << " under pid " << job.pid() << "\n"
                                 << tts::read_file(log);
    if (worker.size() != 1) return tts::read_file(log);
    EXPECT_EQ(kill(worker[0], SIGSTOP), 0);
    const auto stopped_at = std::chrono::steady_clock::now();
    // torchrun waits 30 s for its workers to obey SIGTERM before it kills them.
    const int code = job.wait(120);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped_at).count();
    const std::string output = tts::read_file(log);
    EXPECT_GT(code, 0) << output;
    EXPECT_LT(seconds, 100.0) << output;
    // The stopped worker was ended and reaped by its launcher, not left stopped (or orphaned).
    EXPECT_EQ(kill(worker[0], 0), -1)
        << "rank " << victim << " (pid " << worker[0] << ") outlived the job\n"
        << output;
    return output;
  }

  // --resume auto after the failure continues from the newest checkpoint, on both ranks.
  void resume(const std::string& run) {
    const std::string latest = fs::read_symlink(root_ + "/" + run + "/checkpoints/latest").string();
    const int step = std::stoi(latest.substr(latest.find('_') + 1));
    ASSERT_GE(step, 2);
    const std::string resumed =
        train(run, "--resume auto --nproc-per-node 2 --max-steps " + std::to_string(step + 2) +
                       " --set train.checkpoint_interval=2 --set train.val_interval=100000"
                       " --set logging.samples=false");
    EXPECT_NE(resumed.find("at step " + std::to_string(step)), std::string::npos) << resumed;
    EXPECT_NE(resumed.find("all 2 workers finished"), std::string::npos) << resumed;
  }
};

TEST_F(HungRanks, AStoppedRankZeroIsNamedAndTheRunResumes) {
  const std::string output = stop_a_worker("stopped_0", 0, "", " --nproc-per-node 2");
  // Rank 1's store calls go unanswered: it ends, naming rank 0 as the silent store host.
  EXPECT_NE(output.find("rank 0 is silent"), std::string::npos) << output;
  EXPECT_NE(output.find("rank 1 exited with code 1"), std::string::npos) << output;
  EXPECT_NE(output.find("rank 0 is stopped"), std::string::npos) << output;
  resume("stopped_0");
}

TEST_F(HungRanks, AStoppedRankOneIsNamedAndTheRunResumes) {
  const std::string output = stop_a_worker("stopped_1", 1, "", " --nproc-per-node 2");
  // Rank 0's collective times out and the heartbeat diagnosis names rank 1.
  EXPECT_NE(output.find("lost rank 1"), std::string::npos) << output;
  EXPECT_NE(output.find("rank 0 exited with code 1"), std::string::npos) << output;
  EXPECT_NE(output.find("rank 1 is stopped"), std::string::npos) << output;
  resume("stopped_1");
}

class HungRanksTorchrun : public HungRanks {
 protected:
  void SetUp() override {
    if (!fs::exists(tts::test::torchrun_path())) GTEST_SKIP() << tts::test::no_torchrun_reason();
  }
  static std::string torchrun() {
    return tts::test::torchrun_path() +
           " --no-python --max-restarts 0 --nproc-per-node 2 --monitor-interval 1 "
           "--rdzv-backend static --rdzv-endpoint 127.0.0.1:" +
           std::to_string(tts::test::free_port_pair());
  }
};

TEST_F(HungRanksTorchrun, AStoppedRankZeroIsNamed) {
  const std::string output = stop_a_worker("torchrun_stopped_0", 0, torchrun(), "");
  EXPECT_NE(output.find("rank 0 is silent"), std::string::npos) << output;
}

TEST_F(HungRanksTorchrun, AStoppedRankOneIsNamed) {
  const std::string output = stop_a_worker("torchrun_stopped_1", 1, torchrun(), "");
  EXPECT_NE(output.find("lost rank 1"), std::string::npos) << output;
}

}  // namespace
