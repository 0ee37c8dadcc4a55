// Elastic restarts for real: `tts-train train --resume auto` under the built-in launcher's
// --max-restarts and under torchrun --max-restarts (static and c10d rendezvous). A worker killed
// with SIGKILL after a checkpoint costs nothing: the job restarts, resumes from the checkpoint,
// finishes its --max-steps with exit code 0, and ends with the parameters of an uninterrupted
// run.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "background_run.h"
#include "torchrun.h"
#include "train_fixture.h"
#include "tts/core/fs.h"
#include "tts/dist/launcher.h"

namespace fs = std::filesystem;
using tts::test::free_port_pair;
using tts::test::kAtDefaults;
using tts::test::kTiny;
using tts::test::torchrun_path;

namespace {

constexpr int kSteps = 8;
// Checkpoints every 2 steps; the uninterrupted and the interrupted runs differ only in the kill.
const std::string kRunOptions = " --max-steps " + std::to_string(kSteps) +
                                " --set train.batch_size=3" + kAtDefaults +
                                " --set train.checkpoint_interval=2 --set distributed.timeout_s=10";

class TrainRestarts : public tts::test::TrainFixture {
 protected:
  // The reference: the same job, never interrupted (built once per test process).
  void SetUp() override {
    if (!fs::exists(root_ + "/uninterrupted/checkpoints/latest")) {
      train("uninterrupted", "--nproc-per-node 2" + kRunOptions);
    }
  }

  // Runs `LAUNCHER tts-train train ... --resume auto LAUNCHER_OPTIONS` into RUN, kills rank 1 (the
  // child of the launcher process with RANK=1) once the checkpoint of step 2 exists, and expects
  // the job to recover by itself: exit 0, the resume logged, the uninterrupted run's parameters.
  std::string kill_a_worker_and_recover(const std::string& run, const std::string& launcher,
                                        const std::string& launcher_options = "") {
    const std::string log = root_ + "/" + run + ".log";
    const std::string command = launcher + " " + TTS_CLI_PATH + " train --config " + kTiny +
                                " --data " + feats_ + " --out " + root_ + "/" + run +
                                " --resume auto" + kRunOptions + launcher_options;
    tts::test::BackgroundRun job(command, log);
    EXPECT_TRUE(tts::test::wait_for_file(root_ + "/" + run + "/checkpoints/step_00000002.pt", 300))
        << tts::read_file(log);
    std::vector<pid_t> rank1;
    for (int tries = 0; rank1.empty() && tries < 50; ++tries) {
      rank1 = tts::test::children_with_rank(job.pid(), 1);
      if (rank1.empty()) usleep(100000);
    }
    EXPECT_EQ(rank1.size(), 1u) << "no rank 1 under pid " << job.pid() << "\n"
                                << tts::read_file(log);
    if (rank1.size() != 1) return tts::read_file(log);
    EXPECT_EQ(kill(rank1[0], SIGKILL), 0);
    const int code = job.wait(600);
    const std::string output = tts::read_file(log);
    EXPECT_EQ(code, 0) << output;
    // Resumed from a checkpoint at step 2 or later, never from scratch.
    EXPECT_NE(output.find("resumed from " + root_ + "/" + run + "/checkpoints/step_0000000"),
              std::string::npos)
        << output;
    expect_same_parameters("uninterrupted", run, 1e-6);
    return output;
  }
};

TEST_F(TrainRestarts, BuiltInLauncherRestartsAKilledWorkerAndTheRunEndsAsIfUninterrupted) {
  const std::string output =
      kill_a_worker_and_recover("builtin", "", " --nproc-per-node 2 --max-restarts 3");
  EXPECT_NE(output.find("rank 1 was killed by signal 9 (Killed): restarting all 2 workers "
                        "(restart 1 of 3)"),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("all 2 workers finished"), std::string::npos) << output;
}

TEST_F(TrainRestarts, ResumeAutoStartsFreshWithoutACheckpoint) {
  const std::string output = train(
      "fresh", "--resume auto --max-steps 1 --set train.checkpoint_interval=1000" + kAtDefaults);
  EXPECT_NE(output.find("--resume auto: no checkpoint in " + root_ +
                        "/fresh/checkpoints yet: "
                        "starting fresh"),
            std::string::npos)
      << output;
  const std::string again = train(
      "fresh", "--resume auto --max-steps 2 --set train.checkpoint_interval=1000" + kAtDefaults);
  EXPECT_NE(again.find("at step 1"), std::string::npos) << again;
}

TEST_F(TrainRestarts, MaxRestartsWithoutResumeAutoIsRefused) {
  tts::test::CliResult result =
      tts::test::run_cli("train --config " + kTiny + " --data " + feats_ + " --out " + root_ +
                             "/refused --nproc-per-node 2 --max-restarts 2",
                         true);
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--max-restarts 2 needs --resume auto"), std::string::npos)
      << result.output;
}

class TrainRestartsTorchrun : public TrainRestarts {
 protected:
  void SetUp() override {
    if (!fs::exists(torchrun_path())) GTEST_SKIP() << tts::test::no_torchrun_reason();
    TrainRestarts::SetUp();
  }
  std::string torchrun(const std::string& rendezvous) {
    const int port = free_port_pair();
    return torchrun_path() +
           " --no-python --max-restarts 3 --nproc-per-node 2 --monitor-interval 1 " + rendezvous +
           " 127.0.0.1:" + std::to_string(port);
  }
};

TEST_F(TrainRestartsTorchrun, StaticRendezvousRestartsAKilledWorker) {
  kill_a_worker_and_recover("torchrun_static", torchrun("--rdzv-backend static --rdzv-endpoint"));
}

TEST_F(TrainRestartsTorchrun, C10dRendezvousRestartsAKilledWorker) {
  kill_a_worker_and_recover("torchrun_c10d",
                            torchrun("--rdzv-backend c10d --rdzv-id tts-test --rdzv-endpoint"));
}

}  // namespace

namespace {

class TrainRestartsWithBuckets : public tts::test::TrainFixture {};

}  // namespace

// train.length_buckets: the ladder is recorded in the run folder when the run starts; a resumed
// run pads to the same buckets and ends bit for bit as the uninterrupted one; a recorded ladder
// that the store does not give is refused, naming the file and the fix.
TEST_F(TrainRestartsWithBuckets, AResumedRunEndsBitForBitAsAnUninterruptedOne) {
  const std::string options =
      " --set train.batch_size=3 --set train.length_buckets=4" + kAtDefaults;
  train("whole", "--max-steps 4" + options);
  train("halves", "--max-steps 2" + options);
  const std::string recorded = tts::read_file(root_ + "/halves/length_buckets.txt");
  EXPECT_EQ(recorded.rfind("frame_multiple ", 0), 0u) << recorded;
  const std::string resumed = train("halves", "--max-steps 4 --resume" + options);
  EXPECT_NE(resumed.find("resumed from"), std::string::npos) << resumed;
  EXPECT_EQ(tts::read_file(root_ + "/halves/length_buckets.txt"), recorded);
  expect_same_parameters("whole", "halves", 0);

  // Another ladder in the folder (as if the store had changed): the resume is refused.
  tts::write_file_atomic(root_ + "/halves/length_buckets.txt", "frame_multiple 1\n1 2\n");
  tts::test::CliResult refused =
      tts::test::run_cli("train --config " + kTiny + " --data " + feats_ + " --out " + root_ +
                             "/halves --max-steps 6 --resume" + options,
                         true);
  EXPECT_NE(refused.exit_code, 0) << refused.output;
  EXPECT_NE(refused.output.find("length_buckets.txt"), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("resume with the store the run started with"), std::string::npos)
      << refused.output;
}
