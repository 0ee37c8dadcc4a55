// Data-parallel training for real through the CLI's launcher on a small espeak-ng corpus: 2 and 3
// CPU ranks give the parameters of 1 rank with the whole batch at the shipped configs' own
// defaults (dropout on, BatchNorm training), checkpoints move between world sizes, and a worker
// killed with SIGKILL mid-run stops the others and the run resumes.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "background_run.h"
#include "train_fixture.h"
#include "tts/core/fs.h"

namespace fs = std::filesystem;
using tts::test::children_with_rank;
using tts::test::CliResult;
using tts::test::kAtDefaults;
using tts::test::kTiny;
using tts::test::run_cli;

namespace {

class TrainDistributed : public tts::test::TrainFixture {};

}  // namespace

TEST_F(TrainDistributed, TwoAndThreeRanksGiveTheParametersOfOneRankWithTheWholeBatch) {
  // The same global batch of 6 as 1 x 6, 2 x 3 and 3 x 2 (3 ranks on 2 cores is fine: Gloo).
  train("one_rank", "--max-steps 4 --set train.batch_size=6" + kAtDefaults);
  std::string two =
      train("two_ranks", "--max-steps 4 --nproc-per-node 2 --set train.batch_size=3" + kAtDefaults);
  EXPECT_NE(two.find("2 rank(s) on cpu"), std::string::npos) << two;
  EXPECT_NE(two.find("global batch 6"), std::string::npos) << two;
  EXPECT_NE(two.find("all 2 workers finished"), std::string::npos) << two;
  // The launcher prefixes the rank; the worker's own log line does not repeat it.
  EXPECT_EQ(two.find("] [rank 0]"), std::string::npos) << two;
  // Float rounding, with BatchNorm's statistics summed over the ranks: 1e-7 to 8e-7 of a tensor's
  // norm over four seeds (libtorch 1.13, 2026-12-06).
  expect_same_parameters("one_rank", "two_ranks", 5e-6);
  std::string three = train(
      "three_ranks", "--max-steps 4 --nproc-per-node 3 --set train.batch_size=2" + kAtDefaults);
  EXPECT_NE(three.find("all 3 workers finished"), std::string::npos) << three;
  expect_same_parameters("one_rank", "three_ranks", 5e-6);

  // Checkpoints carry no world size in their layout: 2 ranks continue on 1, and 1 on 2.
  std::string on_one =
      train("two_ranks", "--max-steps 5 --resume --set train.batch_size=6" + kAtDefaults);
  EXPECT_NE(on_one.find("resuming a 2-rank checkpoint (global batch 6) on 1 ranks"),
            std::string::npos)
      << on_one;
  std::string on_two =
      train("one_rank",
            "--max-steps 5 --resume --nproc-per-node 2 --set train.batch_size=3" + kAtDefaults);
  EXPECT_NE(on_two.find("resuming a 1-rank checkpoint (global batch 6) on 2 ranks"),
            std::string::npos)
      << on_two;
  expect_same_parameters("one_rank", "two_ranks", 5e-6);
}

// configs/ljspeech_tacotron2.yaml at its own defaults (NVIDIA's dropout rates, Adam eps 1e-8)
// but for the dimensions (tiny's, so that it runs in seconds) and a validation split that leaves
// the 16 utterances something to train on: 2 and 3 ranks give 1 rank's parameters, and a resumed
// run ends bit for bit as an uninterrupted one. The tolerance is 20 times tiny's: Adam's eps of
// 1e-8 (NVIDIA's; tiny's is 1e-6) scales the ranks' rounding up to steps of the learning rate's
// size wherever a gradient component is near zero, and how far depends on the masks drawn: 8e-7
// and 1.7e-5 of a BatchNorm bias's norm for two streams of masks (libtorch 1.13, 2026-12-06).
TEST_F(TrainDistributed, TheLjspeechConfigAtItsDefaultsKeepsBothPromises) {
  const std::string config = std::string(TTS_SOURCE_DIR) + "/configs/ljspeech_tacotron2.yaml";
  const std::string store = root_ + "/ljspeech_feats";
  CliResult made = run_cli("preprocess --config " + config + " --input " + root_ +
                               "/corpus --output " + store + " --workers 2 --set data.val_size=4",
                           true);
  ASSERT_EQ(made.exit_code, 0) << made.output;
  const std::string twin =
      " --set data.val_size=4 --set model.symbols_embedding_dim=64"
      " --set model.encoder_embedding_dim=64 --set model.decoder_rnn_dim=96"
      " --set model.prenet_dim=32 --set model.attention_rnn_dim=96 --set model.attention_dim=32"
      " --set model.attention_location_n_filters=8 --set model.postnet_embedding_dim=64" +
      kAtDefaults;
  auto run = [&](const std::string& name, const std::string& extra) {
    CliResult result = run_cli("train --config " + config + " --data " + store + " --out " + root_ +
                                   "/" + name + " " + extra + twin,
                               true);
    EXPECT_EQ(result.exit_code, 0) << result.output;
  };
  run("lj_one", "--max-steps 4 --set train.batch_size=6");
  run("lj_two", "--max-steps 4 --nproc-per-node 2 --set train.batch_size=3");
  run("lj_three", "--max-steps 4 --nproc-per-node 3 --set train.batch_size=2");
  expect_same_parameters("lj_one", "lj_two", 1e-4);
  expect_same_parameters("lj_one", "lj_three", 1e-4);
  run("lj_resumed", "--max-steps 2 --set train.batch_size=6");
  run("lj_resumed", "--max-steps 4 --resume --set train.batch_size=6");
  expect_same_parameters("lj_one", "lj_resumed", 0);
}

TEST_F(TrainDistributed, AWorkerKilledMidRunStopsTheOthersAndTheRunResumes) {
  const std::string run = root_ + "/killed";
  const std::string log = root_ + "/killed.log";
  const std::string command = std::string(TTS_CLI_PATH) + " train --config " + kTiny + " --data " +
                              feats_ + " --out " + run +
                              " --nproc-per-node 2 --max-steps 100000"
                              " --set train.checkpoint_interval=2 --set train.val_interval=100000"
                              " --set distributed.timeout_s=10";
  tts::test::BackgroundRun launcher(command, log);
  // Wait for the first checkpoint, then kill -9 rank 1 in the middle of training.
  const std::string first_checkpoint = run + "/checkpoints/step_00000002.pt";
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  while (!fs::exists(first_checkpoint) && elapsed() < 180) usleep(100000);
  ASSERT_TRUE(fs::exists(first_checkpoint)) << tts::read_file(log);
  std::vector<pid_t> rank1 = children_with_rank(launcher.pid(), 1);
  ASSERT_EQ(rank1.size(), 1u) << tts::read_file(log);
  ASSERT_EQ(kill(rank1[0], SIGKILL), 0);
  auto killed_at = std::chrono::steady_clock::now();

  const int code = launcher.wait(120);
  double stop_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count();
  std::string output = tts::read_file(log);
  EXPECT_GT(code, 0) << output;
  EXPECT_NE(output.find("rank 1 was killed by signal 9"), std::string::npos) << output;
  // distributed.timeout_s = 10: never a hang (generous bound for a loaded test machine).
  EXPECT_LT(stop_s, 40.0) << output;

  // --resume continues from the newest checkpoint.
  std::string latest = fs::read_symlink(run + "/checkpoints/latest").string();
  int step = std::stoi(latest.substr(latest.find('_') + 1));
  ASSERT_GE(step, 2);
  std::string resumed =
      train("killed", "--resume --nproc-per-node 2 --max-steps " + std::to_string(step + 2) +
                          " --set train.checkpoint_interval=2 --set train.val_interval=100000");
  EXPECT_NE(resumed.find("at step " + std::to_string(step)), std::string::npos) << resumed;
  EXPECT_NE(resumed.find("all 2 workers finished"), std::string::npos) << resumed;
}

TEST_F(TrainDistributed, ABadFeatureFileOnOneRankStopsEveryRankWithItsName) {
  // A copy of the store with the first training utterance's mel file overwritten by garbage.
  const std::string bad = root_ + "/bad_feats";
  fs::remove_all(bad);
  fs::copy(feats_, bad, fs::copy_options::recursive);
  std::ifstream train_tsv(bad + "/train.tsv");
  std::string header, row;
  ASSERT_TRUE(std::getline(train_tsv, header) && std::getline(train_tsv, row));
  const std::string id = row.substr(0, row.find('\t'));
  std::ofstream(bad + "/mels/" + id + ".npy", std::ios::trunc) << "not a numpy file";

  auto start = std::chrono::steady_clock::now();
  CliResult result = run_cli("train --config " + kTiny + " --data " + bad + " --out " + root_ +
                                 "/bad_run --nproc-per-node 2 --max-steps 4"
                                 " --set data.on_bad_file=error --set distributed.timeout_s=10",
                             true);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("mels/" + id + ".npy"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("data.on_bad_file"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("stopping the other ranks"), std::string::npos) << result.output;
  EXPECT_LT(seconds, 120.0) << result.output;  // never a hang
  // The failing rank's error is in its own log in the run directory, and the launcher says where.
  int failed = -1;
  for (int rank = 0; rank < 2; ++rank) {
    const std::string rank_log = root_ + "/bad_run/logs/rank_" + std::to_string(rank) + ".log";
    ASSERT_TRUE(fs::exists(rank_log)) << rank_log;
    if (tts::read_file(rank_log).find("mels/" + id + ".npy") != std::string::npos) failed = rank;
  }
  ASSERT_GE(failed, 0) << "no rank's log names the bad file";
  EXPECT_NE(result.output.find("also in " + root_ + "/bad_run/logs/rank_" + std::to_string(failed) +
                               ".log"),
            std::string::npos)
      << result.output;
}

// SIGTERM reaching one worker only (a scheduler signalling one task): its wish to stop rides on
// the step's gradient all-reduce, so both ranks stop after the same step, write that step's
// checkpoint and the job exits 0.
TEST_F(TrainDistributed, ASignalToOneWorkerStopsBothAfterTheSameStep) {
  const std::string run = root_ + "/signalled";
  const std::string log = root_ + "/signalled.log";
  const std::string command = std::string(TTS_CLI_PATH) + " train --config " + kTiny + " --data " +
                              feats_ + " --out " + run +
                              " --nproc-per-node 2 --max-steps 100000"
                              " --set train.checkpoint_interval=2 --set train.val_interval=100000"
                              " --set distributed.timeout_s=20 > " +
                              log + " 2>&1";
  pid_t launcher = fork();
  ASSERT_GE(launcher, 0);
  if (launcher == 0) {
    execl("/bin/sh", "sh", "-c", ("exec " + command).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  struct KillOnExit {
    pid_t pid;
    bool reaped = false;
    ~KillOnExit() {
      if (reaped) return;
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  } guard{launcher};
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  while (!fs::exists(run + "/checkpoints/step_00000002.pt") && elapsed() < 180) usleep(100000);
  ASSERT_TRUE(fs::exists(run + "/checkpoints/step_00000002.pt")) << tts::read_file(log);
  std::vector<pid_t> rank1 = children_with_rank(launcher, 1);
  ASSERT_EQ(rank1.size(), 1u) << tts::read_file(log);
  ASSERT_EQ(kill(rank1[0], SIGTERM), 0);

  int status = 0;
  ASSERT_EQ(waitpid(launcher, &status, 0), launcher);
  guard.reaped = true;
  const std::string output = tts::read_file(log);
  ASSERT_TRUE(WIFEXITED(status)) << output;
  EXPECT_EQ(WEXITSTATUS(status), 0) << output;
  const std::string latest = fs::read_symlink(run + "/checkpoints/latest").string();
  const std::string step = std::to_string(std::stoi(latest.substr(latest.find('_') + 1)));
  EXPECT_NE(output.find("stopped on request at step " + step), std::string::npos) << output;
  EXPECT_NE(output.find("all 2 workers finished"), std::string::npos) << output;
}

// train.length_buckets pads each rank's batch up to its bucket (a different padding on 1 and on 2
// ranks: the buckets hold every rank batch of the step, not the global one): both promises hold
// with buckets on, and padding to a bucket trains as padding to the batch's longest.
TEST_F(TrainDistributed, WithLengthBucketsTwoRanksGiveTheParametersOfOneRank) {
  const std::string buckets = " --set train.length_buckets=3";
  std::string one =
      train("buckets_one", "--max-steps 4 --set train.batch_size=6" + buckets + kAtDefaults);
  EXPECT_NE(one.find("length buckets: 3 bucket(s) (text, frames):"), std::string::npos) << one;
  EXPECT_NE(one.find("% of mel frames ("), std::string::npos) << one;
  EXPECT_TRUE(fs::exists(root_ + "/buckets_one/length_buckets.txt"));
  train("buckets_two",
        "--max-steps 4 --nproc-per-node 2 --set train.batch_size=3" + buckets + kAtDefaults);
  // The W x B promise's own tolerance (above): float rounding of the ranks' sums.
  expect_same_parameters("buckets_one", "buckets_two", 5e-6);
  // Padding to the buckets changes rounding only (tests/models/tacotron2/test_length_buckets.cpp):
  // the run without buckets ends within the same tolerance.
  train("no_buckets_one", "--max-steps 4 --set train.batch_size=6" + kAtDefaults);
  expect_same_parameters("buckets_one", "no_buckets_one", 5e-6);
}
