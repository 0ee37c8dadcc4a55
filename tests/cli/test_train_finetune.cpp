// Fine-tuning choices through the CLI on a small espeak-ng corpus: train.freeze keeps the named
// parts of a warm-started model exactly as they were while the rest trains (and a frozen run
// resumes exactly), train.validate_at_start measures the model before its first step, and
// train.early_stopping stops a run whose validation loss stops falling, keeping the best
// validation's checkpoint, across a restart too.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "train_fixture.h"

namespace fs = std::filesystem;
using tts::test::CliResult;
using tts::test::kAtDefaults;
using tts::test::run_cli;

namespace {

class TrainFineTune : public tts::test::TrainFixture {
 protected:
  static void SetUpTestSuite() { make_store("train_finetune_", "", "12", ""); }

  static std::string base() {
    static const std::string path = [] {
      train("base", "--max-steps 2" + kAtDefaults);
      return root_ + "/base/checkpoints/latest";
    }();
    return path;
  }

  // The "val" records of a run's metrics.jsonl: step -> loss.
  static std::map<int64_t, double> val_losses(const std::string& run) {
    std::map<int64_t, double> losses;
    std::ifstream in(root_ + "/" + run + "/metrics.jsonl");
    for (std::string line; std::getline(in, line);) {
      YAML::Node record = YAML::Load(line);
      if (record["kind"].as<std::string>() != "val") continue;
      losses[record["step"].as<int64_t>()] = record["loss"].as<double>();
    }
    return losses;
  }

  static bool has_checkpoint(const std::string& run, int64_t step) {
    char name[32];
    std::snprintf(name, sizeof name, "step_%08lld.pt", static_cast<long long>(step));
    return fs::exists(root_ + "/" + run + "/checkpoints/" + name);
  }
};

// A learning rate below float rounding and BatchNorm's statistics frozen: the weights, and so the
// validation loss, never change.
const std::string kStill =
    " --set train.learning_rate=1e-30 --set train.lr_min=0 --set train.freeze_batch_norm=true";
const std::string kValidateEveryStep =
    " --set train.val_interval=1 --set train.checkpoint_interval=1000"
    " --set train.val_inference_utterances=0 --set logging.samples=false";

}  // namespace

TEST_F(TrainFineTune, FrozenPartsKeepTheWarmStartsValuesWhileTheRestTrains) {
  const std::string freeze = " --set train.freeze=[embedding,encoder]";
  std::string output =
      train("frozen", "--max-steps 3 --init-from " + base() + freeze + kAtDefaults);
  EXPECT_NE(output.find("train.freeze [embedding, encoder]:"), std::string::npos) << output;
  const auto start = tensor_norms("base");
  const auto tuned = tensor_norms("frozen");
  int frozen = 0, moved = 0;
  for (const auto& [name, norm] : start) {
    ASSERT_TRUE(tuned.count(name)) << name;
    const bool in_frozen = name.rfind("embedding.", 0) == 0 || name.rfind("encoder.", 0) == 0;
    if (in_frozen && name.find("running_") == std::string::npos &&
        name.find("num_batches") == std::string::npos) {
      EXPECT_EQ(norm, tuned.at(name)) << name;
      ++frozen;
    }
    if (name.rfind("decoder.", 0) == 0 && norm != tuned.at(name)) ++moved;
  }
  EXPECT_GT(frozen, 3);
  EXPECT_GT(moved, 3);

  // A frozen run resumes its own (smaller) optimizer state exactly.
  train("frozen_resumed", "--max-steps 2 --init-from " + base() + freeze + kAtDefaults);
  train("frozen_resumed", "--max-steps 3 --resume" + freeze + kAtDefaults);
  expect_same_parameters("frozen", "frozen_resumed", 0.0);
}

TEST_F(TrainFineTune, APartThatIsNotInTheModelIsAUsageErrorNamingItsParts) {
  CliResult result =
      run_cli("train --config " + tts::test::kTiny + " --data " + feats_ + " --out " + root_ +
                  "/no_such_part --max-steps 1" + " --set train.freeze=[encoders]",
              true);
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("'encoders'"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("decoder"), std::string::npos) << result.output;
}

TEST_F(TrainFineTune, EarlyStoppingEndsARunThatNoLongerImprovesAcrossARestart) {
  // Validated at steps 0 (the best: nothing changes after it) and 1, stopped; resumed, it counts
  // on from its checkpoint: steps 2 and 3 make three validations without a lower loss.
  const std::string options = kStill + kValidateEveryStep +
                              " --set train.validate_at_start=true --set train.early_stopping=3";
  train("still", "--max-steps 1 --init-from " + base() + options);
  std::string output = train("still", "--max-steps 20 --resume" + options);
  EXPECT_NE(output.find("early stopping: 3 validations in a row"), std::string::npos) << output;
  EXPECT_NE(output.find("of step 0 (the model as the run started"), std::string::npos) << output;
  EXPECT_NE(output.find("stopped early at step 3"), std::string::npos) << output;
  const auto losses = val_losses("still");
  ASSERT_EQ(losses.size(), 4u);
  EXPECT_EQ(losses.begin()->first, 0);
  for (const auto& [step, loss] : losses) EXPECT_EQ(loss, losses.at(0)) << step;
}

TEST_F(TrainFineTune, EveryNewBestIsSavedAndKeptPastTheCheckpointRotation) {
  const std::string options =
      kValidateEveryStep + " --set train.early_stopping=50 --set train.keep_checkpoints=1";
  train("improving", "--max-steps 5 --init-from " + base() + options);
  const auto losses = val_losses("improving");
  ASSERT_EQ(losses.size(), 5u);  // no validation at start unless asked
  int64_t best = losses.begin()->first;
  for (const auto& [step, loss] : losses) {
    if (loss < losses.at(best)) best = step;
  }
  EXPECT_TRUE(has_checkpoint("improving", best)) << "best step " << best;
  EXPECT_TRUE(has_checkpoint("improving", 5));
  for (int64_t step = 1; step < 5; ++step) {
    if (step != best) EXPECT_FALSE(has_checkpoint("improving", step)) << step;
  }
}
