// train.precision = bf16 through the CLI on the tiny config: 100 steps end with a training loss
// within 5% of an fp32 run's from the same seed, both learning, and the checkpoint holds fp32
// parameters (resumable and loadable in fp32). And model.recurrent_products pins the CPU product
// path, so that two runs repeat bit for bit.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "../cli/train_fixture.h"
#include "tts/core/fs.h"

using tts::test::CliResult;
using tts::test::run_cli;

namespace {

class PrecisionRun : public tts::test::TrainFixture {};

// The training loss of each logged interval (the mean over its steps), in step order.
std::vector<double> train_losses(const std::string& run) {
  std::stringstream lines(tts::read_file(run + "/metrics.jsonl"));
  std::vector<double> losses;
  for (std::string line; std::getline(lines, line);) {
    YAML::Node record = YAML::Load(line);
    if (record["kind"].as<std::string>() == "train") losses.push_back(record["loss"].as<double>());
  }
  return losses;
}

}  // namespace

TEST_F(PrecisionRun, Bf16EndsTheTinyConfigsFirstHundredStepsWithinFivePercentOfFp32) {
  const std::string common =
      "--max-steps 100 --set train.log_interval=10 --set train.val_interval=1000 "
      "--set train.checkpoint_interval=1000 --set logging.samples=false --set logging.plots=false";
  train("fp32", common);
  std::string output = train("bf16", common + " --set train.precision=bf16");
  std::vector<double> fp32 = train_losses(root_ + "/fp32");
  std::vector<double> bf16 = train_losses(root_ + "/bf16");
  ASSERT_EQ(fp32.size(), 10u);
  ASSERT_EQ(bf16.size(), 10u) << output;
  // Both learn: the last interval's loss well below the first's.
  EXPECT_LT(fp32.back(), 0.8 * fp32.front());
  EXPECT_LT(bf16.back(), 0.8 * bf16.front());
  // The loss after 100 steps (the mean of steps 81-100) within 5% of fp32's.
  double last32 = (fp32[8] + fp32[9]) / 2, last16 = (bf16[8] + bf16[9]) / 2;
  EXPECT_NEAR(last16, last32, 0.05 * last32) << "fp32 " << last32 << ", bf16 " << last16;

  // The checkpoint's parameters are fp32: it resumes and synthesizes like any other.
  CliResult inspected = run_cli("inspect --json " + root_ + "/bf16/checkpoints/latest");
  ASSERT_EQ(inspected.exit_code, 0) << inspected.output;
  YAML::Node json = YAML::Load(inspected.output);
  ASSERT_GT(json["tensors"].size(), 10u);
  for (const auto& tensor : json["tensors"]) {
    std::string dtype = tensor["dtype"].as<std::string>();  // BatchNorm's counters are int64
    EXPECT_TRUE(dtype == "float32" || dtype == "int64")
        << tensor["name"].as<std::string>() << ": " << dtype;
  }
  std::cout << "loss of steps 81-100: fp32 " << last32 << ", bf16 " << last16 << "\n";
}

// With one product path pinned (model.recurrent_products = kernel or gemm), two runs from the same
// seed end with the same parameters to the last bit; "fastest" times the paths per process and
// may pick differently from run to run.
TEST_F(PrecisionRun, APinnedProductPathRepeatsBitForBit) {
  for (const char* path : {"kernel", "gemm"}) {
    const std::string args = std::string("--max-steps 3") + tts::test::kAtDefaults +
                             " --set model.recurrent_products=" + path;
    train(std::string("pinned_a_") + path, args);
    train(std::string("pinned_b_") + path, args);
    expect_same_parameters(std::string("pinned_a_") + path, std::string("pinned_b_") + path, 0.0);
  }
}
