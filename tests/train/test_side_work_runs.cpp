// Whole training runs through the CLI whose side work (validation sample, plots) fails or is
// degenerate: they end with a checkpoint and exit 0.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <sstream>

#include "../cli/train_fixture.h"
#include "tts/core/fs.h"

namespace fs = std::filesystem;
using tts::test::CliResult;
using tts::test::run_cli;

namespace {

class TrainSideWork : public tts::test::TrainFixture {};

std::vector<YAML::Node> val_records(const std::string& run) {
  std::stringstream lines(tts::read_file(run + "/metrics.jsonl"));
  std::vector<YAML::Node> records;
  for (std::string line; std::getline(lines, line);) {
    YAML::Node record = YAML::Load(line);
    if (record["kind"].as<std::string>() == "val") records.push_back(record);
  }
  return records;
}

}  // namespace

// The case: an untrained model's free-running sample stops after a frame or two, too
// short for Griffin-Lim; the run used to die before writing any checkpoint.
TEST_F(TrainSideWork, AOneStepRunOnTheTinyConfigEndsWithACheckpointAndItsAlignmentScores) {
  std::string output = train("one_step", "--max-steps 1");
  std::string run = root_ + "/one_step";
  ASSERT_TRUE(fs::exists(run + "/checkpoints/step_00000001.pt")) << output;
  EXPECT_NE(output.find("alignment diagonal"), std::string::npos) << output;

  auto records = val_records(run);
  ASSERT_EQ(records.size(), 1u);
  for (const char* key :
       {"loss", "diagonal_score", "focus_rate", "infer_diagonal_score", "infer_focus_rate",
        "infer_stop_fired", "infer_max_steps_hit", "infer_frame_ratio"}) {
    ASSERT_TRUE(records[0][key].IsDefined()) << key;
  }
  double diagonal = records[0]["diagonal_score"].as<double>();
  EXPECT_GT(diagonal, 0.0);
  EXPECT_LE(diagonal, 1.0);
  double fired = records[0]["infer_stop_fired"].as<double>();
  EXPECT_DOUBLE_EQ(fired + records[0]["infer_max_steps_hit"].as<double>(), 1.0);

  // The checkpoint keeps the validation's scores; inspect shows them.
  CliResult inspect = run_cli("inspect --json " + run + "/checkpoints/latest");
  ASSERT_EQ(inspect.exit_code, 0) << inspect.output;
  YAML::Node json = YAML::Load(inspect.output);
  EXPECT_DOUBLE_EQ(json["metrics"]["val/diagonal_score"].as<double>(), diagonal);
  EXPECT_TRUE(json["metrics"]["val/infer_frame_ratio"].IsDefined());
  CliResult text = run_cli("inspect " + run + "/checkpoints/latest");
  EXPECT_NE(text.output.find("val/focus_rate"), std::string::npos) << text.output;
}

TEST_F(TrainSideWork, ARunWhosePlotsCannotBeWrittenWarnsAndTrainsOn) {
  // Tests run as root, which ignores permissions: a regular file where plots/ should be is what
  // makes every plot write fail.
  std::string run = root_ + "/no_plots";
  fs::create_directories(run);
  tts::write_file_atomic(run + "/plots", "not a directory");
  std::string output = train("no_plots",
                             "--max-steps 2 --set train.val_interval=1 "
                             "--set train.checkpoint_interval=1");
  EXPECT_TRUE(fs::exists(run + "/checkpoints/step_00000001.pt"));
  EXPECT_TRUE(fs::exists(run + "/checkpoints/step_00000002.pt"));
  EXPECT_NE(output.find("the alignment plot failed, training goes on"), std::string::npos)
      << output;
  EXPECT_EQ(val_records(run).size(), 2u);
  EXPECT_TRUE(fs::is_regular_file(run + "/plots"));
}
