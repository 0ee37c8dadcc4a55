// Trains for real through the CLI on a small espeak-ng corpus (one process): outputs of a run,
// inspect, synthesize, resume equivalence, a store made with other settings.
#include <gtest/gtest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "train_fixture.h"
#include "tts/core/fs.h"

namespace fs = std::filesystem;
using tts::test::CliResult;
using tts::test::kAtDefaults;
using tts::test::kTiny;
using tts::test::run_cli;

namespace {
class TrainCommand : public tts::test::TrainFixture {};
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
  // The family's own fields (models/registry.h): its kind and, for Tacotron-2, r.
  EXPECT_EQ(json["model"].as<std::string>(), "tacotron2");
  EXPECT_EQ(json["r"].as<int>(), 2);
  CliResult text = run_cli("inspect " + run + "/checkpoints/latest");
  ASSERT_EQ(text.exit_code, 0);
  EXPECT_NE(text.output.find("model        Tacotron-2, r=2, encoder "), std::string::npos)
      << text.output;

  std::string wav = root_ + "/hello.wav";
  CliResult spoken = run_cli("synthesize --checkpoint " + run +
                                 "/checkpoints/latest --text "
                                 "\"Hello, Dr. Smith.\" --plot --out " +
                                 wav,
                             true);
  ASSERT_EQ(spoken.exit_code, 0) << spoken.output;
  EXPECT_GT(fs::file_size(wav), 1000u);
  EXPECT_TRUE(fs::exists(root_ + "/hello.alignment.png"));
  EXPECT_TRUE(fs::exists(root_ + "/hello.mel.png"));
  EXPECT_TRUE(fs::exists(root_ + "/hello.mel.npy"));
}

TEST_F(TrainCommand, AResumedRunEndsWithTheParametersOfAnUninterruptedOne) {
  train("straight", "--max-steps 6" + kAtDefaults);
  train("resumed", "--max-steps 3" + kAtDefaults);
  std::string output = train("resumed", "--max-steps 6 --resume" + kAtDefaults);
  EXPECT_NE(output.find("resumed from"), std::string::npos) << output;
  expect_same_parameters("straight", "resumed", 0.0);
}

// A resumed run reads the ladder it recorded (RUN/length_buckets.txt) as a regular file of the run
// folder: a symlink pointing out of it is refused, and so is a malformed ladder, each naming the
// file (and the line).
TEST_F(TrainCommand, ARecordedLadderThatIsASymlinkOrMalformedIsRefusedOnResume) {
  const std::string buckets = " --set train.length_buckets=3";
  train("buckets", "--max-steps 1" + kAtDefaults + buckets);
  const std::string path = root_ + "/buckets/length_buckets.txt";
  const std::string recorded = tts::read_file(path);
  const std::string outside = root_ + "/outside_length_buckets.txt";
  std::ofstream(outside) << recorded;
  fs::remove(path);
  fs::create_symlink(outside, path);
  const std::string resume = "train --config " + kTiny + " --data " + feats_ + " --out " + root_ +
                             "/buckets --max-steps 2 --resume" + kAtDefaults + buckets;
  CliResult linked = run_cli(resume, true);
  EXPECT_NE(linked.exit_code, 0) << linked.output;
  EXPECT_NE(linked.output.find(path), std::string::npos) << linked.output;
  EXPECT_NE(linked.output.find("is a symbolic link"), std::string::npos) << linked.output;
  EXPECT_EQ(tts::read_file(outside), recorded) << "the file the link points at is left alone";

  fs::remove(path);
  std::ofstream(path) << "frame_multiple 2\n3 ten\n";
  CliResult malformed = run_cli(resume, true);
  EXPECT_NE(malformed.exit_code, 0) << malformed.output;
  EXPECT_NE(malformed.output.find(path + ":2: "), std::string::npos) << malformed.output;

  fs::remove(path);
  std::ofstream(path) << recorded;
  EXPECT_EQ(run_cli(resume, true).exit_code, 0);
}

// Settings that break the rank-count promise are named once, at start, with why.
TEST_F(TrainCommand, SettingsThatBreakThePromisesAreLoggedOnceAtStart) {
  const std::string quiet = train("quiet", "--max-steps 1" + kAtDefaults);
  EXPECT_EQ(quiet.find("do not train exactly"), std::string::npos) << quiet;
  const std::string output = train("broken",
                                   "--max-steps 1 --set train.batch_norm=per_rank "
                                   "--set train.loss_normalization=padded_batch" +
                                       kAtDefaults);
  const size_t first = output.find("do not train exactly as 1 rank x W*B");
  ASSERT_NE(first, std::string::npos) << output;
  EXPECT_EQ(output.find("do not train exactly", first + 1), std::string::npos) << output;
  EXPECT_NE(output.find("train.batch_norm=per_rank: BatchNorm normalizes by each rank's own"),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("train.loss_normalization=padded_batch"), std::string::npos) << output;
}

TEST_F(TrainCommand, AStoreMadeWithOtherSettingsIsRefusedBeforeTraining) {
  CliResult result = run_cli("train --config " + kTiny + " --data " + feats_ + " --out " + root_ +
                                 "/refused --set audio.n_fft=2048 --set audio.win_length=2048",
                             true);
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("audio.n_fft"), std::string::npos) << result.output;
  EXPECT_FALSE(fs::exists(root_ + "/refused/checkpoints"));
}

// --resume into a folder without a checkpoint has nothing to continue: refused before training,
// pointing to --resume auto (continue when there is one) and to a fresh start.
TEST_F(TrainCommand, ResumingWithoutACheckpointPointsToResumeAuto) {
  fs::create_directories(root_ + "/empty_run");
  CliResult result = run_cli("train --config " + kTiny + " --data " + feats_ + " --out " + root_ +
                                 "/empty_run --resume --max-steps 1",
                             true);
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--resume: no checkpoint in " + root_ + "/empty_run/checkpoints"),
            std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("--resume auto"), std::string::npos) << result.output;
  EXPECT_FALSE(fs::exists(root_ + "/empty_run/checkpoints"));
}

// A run folder holds one run: a second `train` into it is refused (exit 2) with the ways forward
// and leaves it untouched; --overwrite moves the old run into RUN/previous-1 and starts at step
// 0; a folder a run left without checkpoints or metrics is reused.
TEST_F(TrainCommand, ASecondRunIntoAUsedFolderIsRefusedOrMovesTheOldOneAside) {
  const std::string quick =
      " --max-steps 1 --set train.checkpoint_interval=1 --set "
      "train.log_interval=1" +
      kAtDefaults;
  train("used", quick);
  const std::string run = root_ + "/used";
  const std::string metrics = tts::read_file(run + "/metrics.jsonl");
  const std::string again =
      "train --config " + kTiny + " --data " + feats_ + " --out " + run + quick;
  CliResult refused = run_cli(again, true);
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  for (const char* named : {"already holds a run", "checkpoints/step_00000001.pt", "metrics.jsonl",
                            "--resume", "--out", "--overwrite"}) {
    EXPECT_NE(refused.output.find(named), std::string::npos) << named << ":\n" << refused.output;
  }
  EXPECT_EQ(tts::read_file(run + "/metrics.jsonl"), metrics);

  CliResult both = run_cli(again + " --overwrite --resume", true);
  EXPECT_EQ(both.exit_code, 2) << both.output;

  CliResult overwritten = run_cli(again + " --overwrite", true);
  ASSERT_EQ(overwritten.exit_code, 0) << overwritten.output;
  EXPECT_NE(overwritten.output.find(run + "/previous-1"), std::string::npos) << overwritten.output;
  EXPECT_EQ(tts::read_file(run + "/previous-1/metrics.jsonl"), metrics);
  EXPECT_TRUE(fs::exists(run + "/previous-1/checkpoints/step_00000001.pt"));
  EXPECT_TRUE(fs::exists(run + "/previous-1/train.log"));
  std::stringstream fresh(tts::read_file(run + "/metrics.jsonl"));
  int train_records = 0;
  for (std::string line; std::getline(fresh, line);) {
    train_records += YAML::Load(line)["kind"].as<std::string>() == "train";
  }
  EXPECT_EQ(train_records, 1) << "the new run's metrics alone";

  // Left by a run that never logged a step nor saved: config.yaml and logs only.
  const std::string leftover = root_ + "/leftover";
  fs::create_directories(leftover + "/logs");
  tts::write_file_atomic(leftover + "/config.yaml", "{}\n");
  tts::write_file_atomic(leftover + "/metrics.jsonl", "");
  train("leftover", quick);
  EXPECT_TRUE(fs::exists(leftover + "/checkpoints/step_00000001.pt"));
  EXPECT_FALSE(fs::exists(leftover + "/previous-1"));
}

// train.cuda_graphs for a model whose step a replay does not repeat yet: a usage error that says
// why and the fix, before any step. The model's reason comes first (it holds on any device);
// CheckGraphedStep tests the others.
// Tacotron-2's step is replayable (its reason is empty): on the CPU the refusal is the device's.
// The model's reason (HiFi-GAN's) is tested in HifiganTraining.
TEST_F(TrainCommand, CudaGraphsOnTheCpuAreRefusedWithTheFix) {
  tts::test::CliResult refused = tts::test::run_cli(
      "train --config " + kTiny + " --data " + feats_ + " --out " + root_ +
          "/graphs --max-steps 2 --set train.length_buckets=4 --set train.cuda_graphs=true",
      true);
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("train.cuda_graphs: true needs a CUDA device, but this run "
                                "trains on cpu: run it on a GPU (train.device: cuda)"),
            std::string::npos)
      << refused.output;
  EXPECT_NE(refused.output.find("or set train.cuda_graphs: false"), std::string::npos)
      << refused.output;
}
