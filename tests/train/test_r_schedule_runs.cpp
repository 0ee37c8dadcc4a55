// Gradual training through the CLI on the tiny config: a schedule r 3 -> 2 -> 1 trains through
// both switches, checkpoints record the r in force, synthesize uses it, and a run resumed across
// a switch ends with the parameters of an uninterrupted one.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>

#include "../cli/train_fixture.h"
#include "tts/core/fs.h"

namespace fs = std::filesystem;
using tts::test::CliResult;
using tts::test::kAtDefaults;
using tts::test::run_cli;

namespace {

class RScheduleRun : public tts::test::TrainFixture {};

// r 3 with batch 4 from step 0, r 2 with batch 3 from step 2, r 1 with batch 2 from step 4.
const std::string kSchedule = " --set 'train.r_schedule=[[0, 3, 4], [2, 2, 3], [4, 1, 2]]'";

YAML::Node inspect(const std::string& checkpoint) {
  CliResult result = run_cli("inspect --json " + checkpoint);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  return YAML::Load(result.output);
}

}  // namespace

TEST_F(RScheduleRun, ThreeToTwoToOneTrainsThroughBothSwitches) {
  std::string output = train("schedule",
                             "--max-steps 6 --set train.checkpoint_interval=2 "
                             "--set train.val_interval=2 --set train.log_interval=1" +
                                 kSchedule);
  EXPECT_NE(output.find("switches r 3 -> 2, batch 3 per rank"), std::string::npos) << output;
  EXPECT_NE(output.find("switches r 2 -> 1, batch 2 per rank"), std::string::npos) << output;
  std::string dir = root_ + "/schedule/checkpoints/";
  // A checkpoint records the r its steps were trained with (the switch comes after the step).
  for (auto [step, r, batch] : {std::tuple{2, 3, 4}, {4, 2, 3}, {6, 1, 2}}) {
    YAML::Node json = inspect(dir + fmt::format("step_{:08d}.pt", step));
    EXPECT_EQ(json["r"].as<int>(), r) << "step " << step;
    EXPECT_EQ(json["batch_size"].as<int>(), batch) << "step " << step;
    for (const auto& tensor : json["tensors"]) {
      std::string name = tensor["name"].as<std::string>();
      if (name == "decoder.linear_projection.weight") {
        EXPECT_EQ(tensor["shape"][0].as<int>(), 80 * 3);  // the largest r, at every step
      }
      if (name == "decoder.prenet.layer0.weight") {
        EXPECT_EQ(tensor["shape"][1].as<int>(), 80);  // the last frame of the previous step
      }
    }
  }
  // synthesize decodes with the checkpoint's r (1): frames need not be a multiple of 3.
  CliResult spoken = run_cli("synthesize --checkpoint " + dir + "latest --text \"Hello.\" --out " +
                                 root_ + "/schedule.wav",
                             true);
  ASSERT_EQ(spoken.exit_code, 0) << spoken.output;
  EXPECT_TRUE(fs::exists(root_ + "/schedule.wav"));
}

TEST_F(RScheduleRun, AResumeAcrossASwitchEndsLikeAnUninterruptedRun) {
  train("schedule_straight", "--max-steps 6" + kAtDefaults + kSchedule);
  // Stopped at step 2 (the first switch), then at 3 (inside the second phase), resumed twice.
  train("schedule_resumed", "--max-steps 2" + kAtDefaults + kSchedule);
  train("schedule_resumed", "--max-steps 3 --resume" + kAtDefaults + kSchedule);
  std::string output =
      train("schedule_resumed", "--max-steps 6 --resume" + kAtDefaults + kSchedule);
  EXPECT_NE(output.find("switches r 2 -> 1"), std::string::npos) << output;
  expect_same_parameters("schedule_straight", "schedule_resumed", 1e-6);
}

// train.length_buckets under a schedule: one ladder for the whole run, its frame boundaries
// multiples of every r of the schedule (6 for r 3, 2 and 1), which every phase pads to; a resume
// across a switch still ends like the uninterrupted run.
TEST_F(RScheduleRun, LengthBucketsServeEveryPhaseAndAResumeAcrossASwitch) {
  const std::string buckets = " --set train.length_buckets=3";
  std::string output =
      train("buckets_straight", "--max-steps 6" + kAtDefaults + kSchedule + buckets);
  EXPECT_NE(output.find("switches r 2 -> 1"), std::string::npos) << output;
  const std::string recorded = tts::read_file(root_ + "/buckets_straight/length_buckets.txt");
  EXPECT_EQ(recorded.rfind("frame_multiple 6\n", 0), 0u) << recorded;
  train("buckets_resumed", "--max-steps 3" + kAtDefaults + kSchedule + buckets);
  train("buckets_resumed", "--max-steps 6 --resume" + kAtDefaults + kSchedule + buckets);
  expect_same_parameters("buckets_straight", "buckets_resumed", 1e-6);
}
