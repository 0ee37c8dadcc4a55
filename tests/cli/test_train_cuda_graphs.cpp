// train.cuda_graphs on a GPU (Note [Replaying a training step], train/cuda_graph_step.h): a run
// whose steps are replayed CUDA graphs ends with the parameters of the same run trained eagerly,
// buckets, warm-up and capture included. Skipped where no CUDA device is (and so in a build
// without CUDA, where the refusal is tested in CheckGraphedStep).
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <string>

#include "train_fixture.h"

namespace {

class TrainCudaGraphs : public tts::test::TrainFixture {
 protected:
  // The corpus only where the test runs.
  static void SetUpTestSuite() {
    if (torch::cuda::is_available()) TrainFixture::SetUpTestSuite();
  }
};

TEST_F(TrainCudaGraphs, AReplayedRunEndsWithTheParametersOfAnEagerOne) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  // 16 utterances in batches of 4 over 2 buckets: each shape runs its 3 eager warm-up steps,
  // is captured, then replayed, within 24 steps.
  const std::string common = tts::test::kAtDefaults +
                             " --max-steps 24 --set train.device=cuda --set train.batch_size=4"
                             " --set train.length_buckets=2 --set train.log_interval=4";
  const tts::test::CliResult graphed =
      tts::test::run_cli("train --config " + tts::test::kTiny + " --data " + feats_ + " --out " +
                             root_ + "/graphed " + common + " --set train.cuda_graphs=true",
                         true);
  ASSERT_EQ(graphed.exit_code, 0) << graphed.output;
  EXPECT_NE(graphed.output.find("captured the training step"), std::string::npos) << graphed.output;
  train("eager", common);
  // The graphed run's encoder LSTM runs masked, the eager run's cuDNN's over the packed batch
  // (recurrence_paths): the same function in another order of float additions.
  expect_same_parameters("graphed", "eager", 1e-4);
}

}  // namespace
