// Trains for real through the CLI on a small espeak-ng corpus: outputs of a run, inspect,
// synthesize, resume equivalence, data-parallel training on 2 and 3 CPU ranks, and a worker
// killed with SIGKILL in the middle of a run.
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

#include "cli_test_util.h"
#include "tts/core/fs.h"

namespace fs = std::filesystem;
using tts::test::CliResult;
using tts::test::run_cli;

namespace {

const std::string kTiny = std::string(TTS_SOURCE_DIR) + "/configs/tiny.yaml";

// Dropout off and BatchNorm frozen (batch statistics are per rank, as in PyTorch DDP without
// SyncBatchNorm), so that runs can be compared exactly.
const std::string kExact =
    " --set train.freeze_batch_norm=true --set model.p_prenet_dropout=0 --set "
    "model.p_attention_dropout=0"
    " --set model.p_decoder_dropout=0 --set model.p_encoder_dropout=0"
    " --set model.p_postnet_dropout=0 --set train.val_interval=1000"
    " --set train.checkpoint_interval=1000 --set logging.samples=false";

class TrainCommand : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // ctest runs every test of this suite as its own process, in parallel: one directory each.
    root_ = tts::test::fresh_dir("train_command_" + std::to_string(getpid()));
    std::string corpus = root_ + "/corpus";
    std::string make = "MAX_CHARS=60 " + std::string(TTS_SOURCE_DIR) + "/scripts/make_corpus.sh " +
                       corpus + " 16 >/dev/null";
    ASSERT_EQ(std::system(make.c_str()), 0);
    feats_ = root_ + "/feats";
    CliResult result = run_cli("preprocess --config " + kTiny + " --input " + corpus +
                                   " --output " + feats_ + " --workers 2",
                               true);
    ASSERT_EQ(result.exit_code, 0) << result.output;
  }

  static std::string train(const std::string& run, const std::string& extra) {
    CliResult result = run_cli("train --config " + kTiny + " --data " + feats_ + " --out " + root_ +
                                   "/" + run + " " + extra,
                               true);
    EXPECT_EQ(result.exit_code, 0) << result.output;
    return result.output;
  }

  // name -> l2 of every tensor of the run's latest checkpoint, via `inspect --json`.
  static std::map<std::string, double> tensor_norms(const std::string& run) {
    CliResult result = run_cli("inspect --json " + root_ + "/" + run + "/checkpoints/latest");
    EXPECT_EQ(result.exit_code, 0);
    YAML::Node json = YAML::Load(result.output);  // JSON is YAML
    std::map<std::string, double> norms;
    for (const auto& tensor : json["tensors"]) {
      norms[tensor["name"].as<std::string>()] = tensor["l2"].as<double>();
    }
    return norms;
  }

  static void expect_same_parameters(const std::string& a, const std::string& b, double tolerance) {
    auto first = tensor_norms(a);
    auto second = tensor_norms(b);
    ASSERT_EQ(first.size(), second.size());
    ASSERT_GT(first.size(), 10u);
    for (const auto& [name, norm] : first) {
      ASSERT_TRUE(second.count(name)) << name;
      double scale = std::max(std::abs(norm), 1e-12);
      EXPECT_LE(std::abs(norm - second[name]) / scale, tolerance)
          << name << ": " << norm << " vs " << second[name];
    }
  }

  static std::string root_;
  static std::string feats_;
};

std::string TrainCommand::root_;
std::string TrainCommand::feats_;

}  // namespace

TEST_F(TrainCommand, ARunWritesConfigMetricsEventsPlotsSamplesAndCheckpoints) {
  std::string output =
      train("run",
            "--max-steps 6 --set train.val_interval=3 --set train.checkpoint_interval=3 "
            "--set train.log_interval=2 --set train.keep_checkpoints=1");
  std::string run = root_ + "/run";
  EXPECT_TRUE(fs::exists(run + "/config.yaml"));
  EXPECT_TRUE(fs::exists(run + "/train.log"));
  EXPECT_TRUE(fs::exists(run + "/plots/step_3_alignment.png"));
  EXPECT_TRUE(fs::exists(run + "/plots/step_6_mel.png"));
  EXPECT_TRUE(fs::exists(run + "/samples/step_6.wav"));
  EXPECT_TRUE(fs::is_symlink(run + "/checkpoints/latest"));
  EXPECT_EQ(fs::read_symlink(run + "/checkpoints/latest").string(), "step_00000006.pt");
  EXPECT_FALSE(fs::exists(run + "/checkpoints/step_00000003.pt"));  // keep_checkpoints: 1
  bool events = false;
  for (const auto& item : fs::directory_iterator(run)) {
    events |= item.path().filename().string().rfind("events.out.tfevents.", 0) == 0;
  }
  EXPECT_TRUE(events);

  std::stringstream metrics(tts::read_file(run + "/metrics.jsonl"));
  int train_records = 0;
  int val_records = 0;
  for (std::string line; std::getline(metrics, line);) {
    YAML::Node record = YAML::Load(line);
    std::string kind = record["kind"].as<std::string>();
    if (kind == "train") {
      ++train_records;
      for (const char* key : {"step", "epoch", "loss", "mel_loss", "gate_loss", "grad_norm", "lr",
                              "mel_frames_per_s", "data_wait_s", "forward_s", "backward_s",
                              "comm_exposed_s", "optimizer_s", "rank_spread"}) {
        EXPECT_TRUE(record[key].IsDefined()) << key << " missing in " << line;
      }
      EXPECT_TRUE(std::isfinite(record["loss"].as<double>()));
    } else if (kind == "val") {
      ++val_records;
    }
  }
  EXPECT_EQ(train_records, 3);
  EXPECT_EQ(val_records, 2);
  EXPECT_NE(output.find("step 6/6"), std::string::npos) << output;

  CliResult inspect = run_cli("inspect --json " + run + "/checkpoints/latest");
  ASSERT_EQ(inspect.exit_code, 0);
  YAML::Node json = YAML::Load(inspect.output);
  EXPECT_EQ(json["step"].as<int>(), 6);
  EXPECT_EQ(json["world_size"].as<int>(), 1);
  EXPECT_EQ(json["batch_size"].as<int>(), 4);
  EXPECT_GT(json["params"].as<int64_t>(), 10000);
  EXPECT_EQ(json["tensors"][0]["shape"].size(), 2u);

  std::string wav = root_ + "/hello.wav";
  CliResult spoken = run_cli("synthesize --checkpoint " + run +
                                 "/checkpoints/latest --text "
                                 "\"Hello, Dr. Smith.\" --out " +
                                 wav,
                             true);
  ASSERT_EQ(spoken.exit_code, 0) << spoken.output;
  EXPECT_GT(fs::file_size(wav), 1000u);
  EXPECT_TRUE(fs::exists(root_ + "/hello.alignment.png"));
  EXPECT_TRUE(fs::exists(root_ + "/hello.mel.npy"));
}

TEST_F(TrainCommand, AResumedRunEndsWithTheParametersOfAnUninterruptedOne) {
  train("straight", "--max-steps 6" + kExact);
  train("resumed", "--max-steps 3" + kExact);
  std::string output = train("resumed", "--max-steps 6 --resume" + kExact);
  EXPECT_NE(output.find("resumed from"), std::string::npos) << output;
  expect_same_parameters("straight", "resumed", 1e-6);
}

TEST_F(TrainCommand, TwoAndThreeRanksGiveTheParametersOfOneRankWithTheWholeBatch) {
  // The same global batch of 6 as 1 x 6, 2 x 3 and 3 x 2 (3 ranks on 2 cores is fine: Gloo).
  train("one_rank", "--max-steps 4 --set train.batch_size=6" + kExact);
  std::string two =
      train("two_ranks", "--max-steps 4 --nproc-per-node 2 --set train.batch_size=3" + kExact);
  EXPECT_NE(two.find("2 rank(s) on cpu"), std::string::npos) << two;
  EXPECT_NE(two.find("global batch 6"), std::string::npos) << two;
  EXPECT_NE(two.find("all 2 workers finished"), std::string::npos) << two;
  // The launcher prefixes the rank; the worker's own log line does not repeat it.
  EXPECT_EQ(two.find("] [rank 0]"), std::string::npos) << two;
  expect_same_parameters("one_rank", "two_ranks", 1e-5);
  std::string three =
      train("three_ranks", "--max-steps 4 --nproc-per-node 3 --set train.batch_size=2" + kExact);
  EXPECT_NE(three.find("all 3 workers finished"), std::string::npos) << three;
  expect_same_parameters("one_rank", "three_ranks", 1e-5);

  // Checkpoints carry no world size in their layout: 2 ranks continue on 1, and 1 on 2.
  std::string on_one =
      train("two_ranks", "--max-steps 5 --resume --set train.batch_size=6" + kExact);
  EXPECT_NE(on_one.find("resuming a 2-rank checkpoint (global batch 6) on 1 ranks"),
            std::string::npos)
      << on_one;
  std::string on_two = train(
      "one_rank", "--max-steps 5 --resume --nproc-per-node 2 --set train.batch_size=3" + kExact);
  EXPECT_NE(on_two.find("resuming a 1-rank checkpoint (global batch 6) on 2 ranks"),
            std::string::npos)
      << on_two;
  expect_same_parameters("one_rank", "two_ranks", 1e-5);
}

namespace {

// The pids of `parent`'s children whose environment has RANK=rank.
std::vector<pid_t> children_with_rank(pid_t parent, int rank) {
  std::vector<pid_t> found;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // pid (comm) state ppid ...: comm may contain spaces, so parse after the last ')'.
    std::istringstream rest(line.substr(line.rfind(')') + 1));
    std::string state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid != parent) continue;
    std::ifstream environ(entry.path() / "environ");
    const std::string wanted = "RANK=" + std::to_string(rank);
    for (std::string variable; std::getline(environ, variable, '\0');) {
      if (variable == wanted) {
        found.push_back(static_cast<pid_t>(std::stol(name)));
        break;
      }
    }
  }
  return found;
}

}  // namespace

TEST_F(TrainCommand, AWorkerKilledMidRunStopsTheOthersAndTheRunResumes) {
  const std::string run = root_ + "/killed";
  const std::string log = root_ + "/killed.log";
  const std::string command = std::string(TTS_CLI_PATH) + " train --config " + kTiny + " --data " +
                              feats_ + " --out " + run +
                              " --nproc-per-node 2 --max-steps 100000"
                              " --set train.checkpoint_interval=2 --set train.val_interval=100000"
                              " --set distributed.timeout_s=10 > " +
                              log + " 2>&1";
  pid_t launcher = fork();
  ASSERT_GE(launcher, 0);
  if (launcher == 0) {
    execl("/bin/sh", "sh", "-c", ("exec " + command).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait for the first checkpoint, then kill -9 rank 1 in the middle of training.
  const std::string first_checkpoint = run + "/checkpoints/step_00000002.pt";
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  while (!fs::exists(first_checkpoint) && elapsed() < 180) usleep(100000);
  ASSERT_TRUE(fs::exists(first_checkpoint)) << tts::read_file(log);
  std::vector<pid_t> rank1 = children_with_rank(launcher, 1);
  ASSERT_EQ(rank1.size(), 1u) << tts::read_file(log);
  ASSERT_EQ(kill(rank1[0], SIGKILL), 0);
  auto killed_at = std::chrono::steady_clock::now();

  int status = 0;
  ASSERT_EQ(waitpid(launcher, &status, 0), launcher);
  double stop_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count();
  std::string output = tts::read_file(log);
  ASSERT_TRUE(WIFEXITED(status)) << output;
  EXPECT_NE(WEXITSTATUS(status), 0) << output;
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

TEST_F(TrainCommand, AStoreMadeWithOtherSettingsIsRefusedBeforeTraining) {
  CliResult result = run_cli("train --config " + kTiny + " --data " + feats_ + " --out " + root_ +
                                 "/refused --set audio.n_fft=2048 --set audio.win_length=2048",
                             true);
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("audio.n_fft"), std::string::npos) << result.output;
  EXPECT_FALSE(fs::exists(root_ + "/refused/checkpoints"));
}
