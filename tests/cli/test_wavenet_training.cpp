// WaveNet trained for real through the CLI (configs/wavenet_small.yaml) on a small espeak-ng corpus
// preprocessed with its waveforms: both promises (2 Gloo ranks give the weights, moving average and
// Adam moments of 1 rank with the whole batch; a resumed run ends as an uninterrupted one), the
// run's artifacts, vocoding with the moving average, and r9y9's layout out and back in.
#include <gtest/gtest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "cli_test_util.h"
#include "tts/audio/audio_io.h"
#include "tts/formats/npy.h"

namespace fs = std::filesystem;
using tts::test::CliResult;
using tts::test::run_cli;

namespace {

const std::string kSmall = std::string(TTS_SOURCE_DIR) + "/configs/wavenet_small.yaml";
// Validation and checkpoints only at the end: the runs compared stop at the same step.
const std::string kQuiet =
    " --set train.val_interval=1000 --set train.checkpoint_interval=1000 --set "
    "logging.samples=false";

class WavenetTraining : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = tts::test::fresh_dir("wavenet_training_" + std::to_string(getpid()));
    const std::string corpus = root_ + "/corpus";
    const std::string make = "MAX_CHARS=60 " + std::string(TTS_SOURCE_DIR) +
                             "/scripts/make_corpus.sh " + corpus + " 10 >/dev/null";
    ASSERT_EQ(std::system(make.c_str()), 0);
    feats_ = root_ + "/feats";
    CliResult result = run_cli("preprocess --config " + kSmall + " --input " + corpus +
                                   " --output " + feats_ + " --workers 2",
                               true);
    ASSERT_EQ(result.exit_code, 0) << result.output;
  }

  // `env` prefixes the command (OMP_NUM_THREADS=1: a one-rank run with the intra-op threads of
  // each rank of a launched run, distributed.threads_per_rank).
  static std::string train(const std::string& run, const std::string& extra, int expected = 0,
                           const std::string& env = "") {
    CliResult result =
        tts::test::run_shell(env + TTS_CLI_PATH + " train --config " + kSmall + " --data " +
                             feats_ + " --out " + root_ + "/" + run + " " + extra + " 2>&1");
    EXPECT_EQ(result.exit_code, expected) << result.output;
    return result.output;
  }

  static std::map<std::string, double> tensor_norms(const std::string& checkpoint) {
    CliResult result = run_cli("inspect --json " + checkpoint);
    EXPECT_EQ(result.exit_code, 0) << result.output;
    YAML::Node json = YAML::Load(result.output);
    std::map<std::string, double> norms;
    for (const auto& tensor : json["tensors"]) {
      norms[tensor["name"].as<std::string>()] = tensor["l2"].as<double>();
    }
    return norms;
  }

  // Every tensor's norm within `tolerance` of the other run's, relative to the larger of the norm
  // and `floor` (a tensor that stayed near zero is compared at the scale of one update).
  static void expect_same_parameters(const std::string& a, const std::string& b, double tolerance,
                                     double floor = 1e-12) {
    auto first = tensor_norms(root_ + "/" + a + "/checkpoints/latest");
    auto second = tensor_norms(root_ + "/" + b + "/checkpoints/latest");
    ASSERT_EQ(first.size(), second.size());
    int trained = 0, averaged = 0;
    for (const auto& [name, norm] : first) {
      ASSERT_TRUE(second.count(name)) << name;
      trained += name.rfind("wavenet.", 0) == 0;
      averaged += name.rfind("ema.", 0) == 0;
      const double scale = std::max(std::abs(norm), floor);
      EXPECT_LE(std::abs(norm - second[name]) / scale, tolerance)
          << name << ": " << norm << " vs " << second[name];
    }
    EXPECT_GT(trained, 20) << "no trained tensors among " << first.size();
    EXPECT_EQ(averaged, trained) << "the moving average covers every weight";
  }

  static inline std::string root_;
  static inline std::string feats_;
};

}  // namespace

// W ranks x B train as 1 rank x W*B, in float rounding. Adam with eps 1e-8 amplifies that rounding
// where a gradient component nearly cancels (the upsampler's 9-tap kernels sum over every
// sample): after 3 steps, 5e-4 of one kernel's norm between one micro-batch of 4 and two of 2 on
// one rank (libtorch 1.13, 2026-12-05), the same as between 1 and 2 ranks. So two ranks of 2 are
// compared with one rank accumulating two micro-batches of 2 (the same windows and sums), and
// with one rank of 4 at eps 1e-3, both within 5e-5 (libtorch 2.11's kernels give up to 2.2e-5;
// a tensor that stayed near zero is compared at the scale of one update: the learning rate, 1e-3).
// The one-rank runs use one intra-op thread, as each launched rank does: with two, the
// convolutions' sums split differently, which Adam amplifies the same way (6e-3 of one bias's
// norm on the 2-core test machine, 2026-12-06).
TEST_F(WavenetTraining, TwoAndThreeRanksGiveTheWeightsAndAverageOfOneRankWithTheWholeBatch) {
  const std::string two =
      train("two_ranks", "--max-steps 3 --nproc-per-node 2 --set train.batch_size=2" + kQuiet);
  EXPECT_NE(two.find("global batch 4"), std::string::npos) << two;
  EXPECT_NE(two.find("all 2 workers finished"), std::string::npos) << two;
  const std::string one_thread = "OMP_NUM_THREADS=1 ";
  train("accumulated", "--max-steps 3 --set train.batch_size=2 --set train.accumulate=2" + kQuiet,
        0, one_thread);
  expect_same_parameters("accumulated", "two_ranks", 5e-5, 1e-3);
  const std::string damped = " --set train.adam_eps=1e-3";
  train("one_rank_damped", "--max-steps 3 --set train.batch_size=4" + damped + kQuiet, 0,
        one_thread);
  train("two_ranks_damped",
        "--max-steps 3 --nproc-per-node 2 --set train.batch_size=2" + damped + kQuiet);
  expect_same_parameters("one_rank_damped", "two_ranks_damped", 5e-5, 1e-3);
  // Three ranks of 1 against one rank of 3, on 9 training utterances (a validation split of 1)
  // so that every global batch is whole. Three gradients sum in another order on three ranks than
  // on one (float addition of three terms is not associative, of two it is), so even one rank
  // accumulating three micro-batches differs by Adam-amplified rounding (3e-4 of a bias near zero
  // at eps 1e-8, 2026-12-06): compared at the damped eps, as 1 x 4 above, within 2e-4 (up to
  // 7e-5 of a bias measured there: a batch of one window per rank sums less than of two).
  const std::string nine = " --set data.val_size=1";
  const std::string three =
      train("three_ranks_damped",
            "--max-steps 3 --nproc-per-node 3 --set train.batch_size=1" + nine + damped + kQuiet);
  EXPECT_NE(three.find("all 3 workers finished"), std::string::npos) << three;
  train("one_rank_of_three_damped",
        "--max-steps 3 --set train.batch_size=3" + nine + damped + kQuiet, 0, one_thread);
  expect_same_parameters("one_rank_of_three_damped", "three_ranks_damped", 2e-4, 1e-3);
}

TEST_F(WavenetTraining, AResumedRunEndsAsAnUninterruptedOne) {
  train("straight", "--max-steps 4" + kQuiet);
  train("resumed", "--max-steps 2" + kQuiet);
  const std::string output = train("resumed", "--max-steps 4 --resume" + kQuiet);
  EXPECT_NE(output.find("resumed from"), std::string::npos) << output;
  expect_same_parameters("straight", "resumed", 0.0);
}

TEST_F(WavenetTraining, ValidatesWithTheAverageAndWritesSamplesPlotsAndMetrics) {
  const std::string output =
      train("artifacts", "--max-steps 4 --set train.val_interval=4 --set train.log_interval=2");
  EXPECT_NE(output.find("WaveNet, "), std::string::npos) << output;
  EXPECT_NE(output.find("moving average kept"), std::string::npos) << output;
  EXPECT_NE(output.find("validation NLL"), std::string::npos) << output;
  const std::string run = root_ + "/artifacts";
  EXPECT_TRUE(fs::exists(run + "/samples/step_4.wav"));
  EXPECT_TRUE(fs::exists(run + "/samples/step_4_real.wav"));
  EXPECT_TRUE(fs::exists(run + "/plots/step_4_mel.png"));
  std::ifstream metrics(run + "/metrics.jsonl");
  std::string line;
  double first_loss = NAN, val_loss = NAN;
  while (std::getline(metrics, line)) {
    YAML::Node record = YAML::Load(line);
    const std::string kind = record["kind"].as<std::string>();
    if (kind == "train" && std::isnan(first_loss)) first_loss = record["loss"].as<double>();
    if (kind == "val") val_loss = record["loss"].as<double>();
  }
  EXPECT_TRUE(std::isfinite(first_loss));
  EXPECT_TRUE(std::isfinite(val_loss));
  CliResult inspected = run_cli("inspect " + run + "/checkpoints/latest");
  EXPECT_NE(inspected.output.find("moving average kept (decay 0.999)"), std::string::npos)
      << inspected.output;
  // The report shows WaveNet's own loss, its optimizer, its plot and samples.
  const std::string html = tts::test::report_sections(run);
  tts::test::expect_vocoder_report(html);
  for (const char* series :
       {"training loss (mixture NLL per sample)", "validation NLL per sample", "model"}) {
    EXPECT_NE(html.find("data-series=\"" + std::string(series) + "\""), std::string::npos)
        << series;
  }
  EXPECT_NE(html.find("WaveNet"), std::string::npos);
}

TEST_F(WavenetTraining, VocodesAStoreMelWithTheAverageAfterTheMelCheck) {
  train("vocoder", "--max-steps 2" + kQuiet);
  std::string mel;
  for (const auto& entry : fs::directory_iterator(feats_ + "/mels")) {
    mel = entry.path().string();
    break;
  }
  ASSERT_FALSE(mel.empty());
  const int64_t frames = tts::formats::read_npy(mel).shape[0];
  CliResult vocoded = run_cli(
      "vocode --checkpoint " + root_ + "/vocoder --mel " + mel + " --out " + root_ + "/a.wav",
      true);
  ASSERT_EQ(vocoded.exit_code, 0) << vocoded.output;
  int rate = 0;
  std::vector<float> audio =
      tts::audio::read_audio(root_ + "/a.wav", tts::config::AudioOptions{}, &rate);
  EXPECT_EQ(rate, 22050);
  EXPECT_EQ(static_cast<int64_t>(audio.size()), frames * 256);
  // A mel whose store says other settings is refused as for every vocoder, nothing written.
  const std::string other = root_ + "/other_store";
  fs::create_directories(other + "/mels");
  fs::copy_file(mel, other + "/mels/x.npy");
  {
    std::ifstream in(feats_ + "/features.yaml");
    std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t at = yaml.find("hop_length: 256");
    ASSERT_NE(at, std::string::npos) << yaml;
    yaml.replace(at, 15, "hop_length: 200");
    std::ofstream(other + "/features.yaml") << yaml;
  }
  CliResult refused = run_cli("vocode --checkpoint " + root_ + "/vocoder --mel " + other +
                                  "/mels/x.npy --out " + root_ + "/b.wav",
                              true);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.output.find("audio.hop_length"), std::string::npos) << refused.output;
  EXPECT_FALSE(fs::exists(root_ + "/b.wav"));
}

TEST_F(WavenetTraining, ConvertsToR9y9sLayoutAndBackWithTheSameWeights) {
  train("to_convert", "--max-steps 2" + kQuiet);
  const std::string r9y9 = root_ + "/r9y9";
  CliResult exported = run_cli("convert --to wavenet " + root_ + "/to_convert --out " + r9y9, true);
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  for (const char* file :
       {"/checkpoint_step000000002.pth", "/checkpoint_step000000002_ema.pth", "/hparams.json"}) {
    EXPECT_TRUE(fs::exists(r9y9 + file)) << file;
  }
  const std::string back = root_ + "/imported.pt";
  CliResult imported =
      run_cli("convert --from wavenet " + r9y9 + "/checkpoint_step000000002.pth --hparams " + r9y9 +
                  "/hparams.json --config " + kSmall + " --out " + back,
              true);
  ASSERT_EQ(imported.exit_code, 0) << imported.output;
  EXPECT_NE(imported.output.find("log10"), std::string::npos) << imported.output;
  auto original = tensor_norms(root_ + "/to_convert/checkpoints/latest");
  auto again = tensor_norms(back);
  size_t compared = 0;
  for (const auto& [name, norm] : again) {
    if (name.rfind("wavenet.", 0) != 0 || !original.count(name)) continue;
    EXPECT_EQ(original[name], norm) << name;
    // The average starts at the imported weights, as r9y9 registers it.
    const std::string average = "ema." + name.substr(8);
    ASSERT_TRUE(again.count(average)) << average;
    EXPECT_EQ(again[average], norm) << average;
    ++compared;
  }
  EXPECT_GT(compared, 20u);
  // The imported model fine-tunes; without --hparams the sizes are unknown: refused.
  train("fine_tuned", "--max-steps 1 --init-from " + back + kQuiet);
  CliResult no_hparams = run_cli(
      "convert --from wavenet " + r9y9 + "/checkpoint_step000000002.pth --out " + root_ + "/x.pt",
      true);
  EXPECT_EQ(no_hparams.exit_code, 2) << no_hparams.output;
  EXPECT_NE(no_hparams.output.find("--hparams"), std::string::npos) << no_hparams.output;
}
