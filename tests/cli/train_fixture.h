// The fixture of the tests that train for real through the CLI: a small espeak-ng corpus,
// preprocessed once per test process into a directory of its own, and helpers to train, read a
// checkpoint's tensor norms through `inspect --json` and compare two runs.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <map>
#include <string>

#include "cli_test_util.h"

namespace tts::test {

inline const std::string kTiny = std::string(TTS_SOURCE_DIR) + "/configs/tiny.yaml";

// tiny.yaml's own defaults (dropout on, keyed by utterance; BatchNorm training over the global
// batch; guided attention; padding zeroed before convolutions; one path for the per-step
// products), which keep W ranks x B = 1 x W*B and resuming exact: only validation, checkpoints
// and samples are moved out of the way.
inline const std::string kAtDefaults =
    " --set train.val_interval=1000 --set train.checkpoint_interval=1000"
    " --set logging.samples=false";

class TrainFixture : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { make_store("train_command_", "", "16", ""); }

  // A corpus made by make_corpus.sh (`environment` before it, COUNT `count`) preprocessed with
  // `preprocess` added to the command, in a folder named `name` and the process id: ctest runs
  // every test as its own process, each with its corpus.
  static void make_store(const std::string& name, const std::string& environment,
                         const std::string& count, const std::string& preprocess) {
    root_ = tts::test::fresh_dir(name + std::to_string(getpid()));
    std::string corpus = root_ + "/corpus";
    std::string make = environment + " MAX_CHARS=60 " + std::string(TTS_SOURCE_DIR) +
                       "/scripts/make_corpus.sh " + corpus + " " + count + " >/dev/null";
    ASSERT_EQ(std::system(make.c_str()), 0);
    feats_ = root_ + "/feats";
    CliResult result = run_cli("preprocess --config " + kTiny + preprocess + " --input " + corpus +
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

  static inline std::string root_;
  static inline std::string feats_;
};

}  // namespace tts::test
