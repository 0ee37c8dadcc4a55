// Runs the real `tts-train data check` on stores built by the test.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "../data/store/make_store.h"
#include "cli_test_util.h"
#include "tts/formats/npy.h"

using tts::test::run_cli;
using Result = tts::test::CliResult;

namespace {

std::string write_config(const std::string& name, const std::string& text) {
  std::string path = tts::test::temp_dir(name);
  std::filesystem::create_directories(TTS_TEST_TMP_DIR);
  std::ofstream(path) << text;
  return path;
}

TEST(DataCheck, AGoodStorePassesWithNothingOnStdout) {
  std::string config_path = write_config("check_ok.yaml", "audio:\n  linear: true\n");
  tts::config::Config config = tts::config::load_config(config_path);
  std::string dir = tts::test::make_store(tts::test::temp_dir("check_ok"), config,
                                          tts::test::varied_utterances(8), 2);
  Result result = run_cli("data check --config " + config_path + " --data " + dir);
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.output, "");
}

TEST(DataCheck, ListsEveryProblemWithFileAndUtteranceAndExitsOne) {
  tts::config::Config store_config;
  store_config.audio.n_fft = 2048;
  store_config.audio.linear = true;
  auto utterances = tts::test::varied_utterances(8);
  std::string dir =
      tts::test::make_store(tts::test::temp_dir("check_bad"), store_config, utterances, 2);
  std::vector<float> data(utterances[4].frames * 79, 0.0f);
  tts::formats::write_npy(dir + "/mels/u004.npy", data.data(), {utterances[4].frames, 79});
  std::filesystem::remove(dir + "/mels/u006.npy");

  std::string config_path = write_config("check_bad.yaml", "audio:\n  linear: true\n");
  Result result = run_cli("data check --config " + config_path + " --data " + dir);
  EXPECT_EQ(result.exit_code, 1);
  const std::string& out = result.output;
  EXPECT_NE(out.find("were made with audio.n_fft=2048 (linear targets have 1025 bins) but the "
                     "config says audio.n_fft=1024 (513 bins)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(dir + "/mels/u004.npy (utterance u004): 79 bins, expected 80"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(dir + "/mels/u006.npy (utterance u006)"), std::string::npos) << out;
  // The linear files have 1025 bins where the config expects 513: every one is reported.
  for (const auto& u : utterances) {
    EXPECT_NE(out.find(dir + "/linear/" + u.id + ".npy (utterance " + u.id + "): 1025 bins, " +
                       "expected 513"),
              std::string::npos)
        << out;
  }
  Result with_log = run_cli("data check --config " + config_path + " --data " + dir, true);
  EXPECT_NE(with_log.output.find("11 problems"), std::string::npos) << with_log.output;
}

// NaN and Inf values in otherwise sound feature files: each file is reported with its utterance,
// the counts and the first position; clean files are not.
TEST(DataCheck, ReportsNanAndInfValuesPerFileAndUtterance) {
  std::string config_path = write_config("check_nan.yaml", "audio:\n  linear: true\n");
  tts::config::Config config = tts::config::load_config(config_path);
  auto utterances = tts::test::varied_utterances(6);
  std::string dir = tts::test::make_store(tts::test::temp_dir("check_nan"), config, utterances, 2);
  const int64_t n_mels = config.audio.n_mels;
  const int64_t n_linear = config.audio.n_linear();
  // u001's mel: NaN at frame 3, bin 7 and at frame 4, bin 0; +Inf at frame 5, bin 79.
  std::vector<float> mel(utterances[1].frames * n_mels, 0.5f);
  mel[3 * n_mels + 7] = std::numeric_limits<float>::quiet_NaN();
  mel[4 * n_mels] = std::numeric_limits<float>::quiet_NaN();
  mel[5 * n_mels + 79] = std::numeric_limits<float>::infinity();
  tts::formats::write_npy(dir + "/mels/u001.npy", mel.data(), {utterances[1].frames, n_mels});
  // u004's linear target: one -Inf at frame 0, bin 2.
  std::vector<float> linear(utterances[4].frames * n_linear, -1.0f);
  linear[2] = -std::numeric_limits<float>::infinity();
  tts::formats::write_npy(dir + "/linear/u004.npy", linear.data(),
                          {utterances[4].frames, n_linear});

  Result result = run_cli("data check --config " + config_path + " --data " + dir);
  EXPECT_EQ(result.exit_code, 1);
  const std::string& out = result.output;
  EXPECT_NE(out.find(dir + "/mels/u001.npy (utterance u001): 3 non-finite values (2 NaN, 1 Inf), "
                           "the first at frame 3, bin 7 (nan)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(dir + "/linear/u004.npy (utterance u004): 1 non-finite value (0 NaN, 1 Inf), "
                           "the first at frame 0, bin 2 (-inf)"),
            std::string::npos)
      << out;
  // Exactly those two problems.
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 2) << out;
}

// A vocoder's waveforms are checked as its mels are: 1-D, finite, as long as the mel says.
TEST(DataCheck, ChecksEachWaveformsShapeFinitenessAndLengthAgainstItsMel) {
  std::string config_path = write_config("check_waves.yaml", "audio:\n  waveforms: true\n");
  tts::config::Config config = tts::config::load_config(config_path);
  auto utterances = tts::test::varied_utterances(6);
  std::string dir =
      tts::test::make_store(tts::test::temp_dir("check_waves"), config, utterances, 2);
  const int64_t n1 = tts::test::samples_of(utterances[1].frames, config);
  std::vector<float> wave(static_cast<size_t>(n1), 0.1f);
  wave[17] = std::numeric_limits<float>::quiet_NaN();
  tts::formats::write_npy(dir + "/waveforms/u001.npy", wave.data(), {n1});
  const int64_t n2 = tts::test::samples_of(utterances[2].frames, config);
  std::vector<float> two_d(static_cast<size_t>(n2), 0.1f);
  tts::formats::write_npy(dir + "/waveforms/u002.npy", two_d.data(), {1, n2});
  // u003: one sample for its mel, and the tables agree on that one sample.
  const float one = 0.5f;
  tts::formats::write_npy(dir + "/waveforms/u003.npy", &one, {1});
  const std::string row = "u003\t" + std::to_string(utterances[3].frames) + "\t" +
                          std::to_string(tts::test::samples_of(utterances[3].frames, config));
  for (const char* list : {"/metadata.tsv", "/train.tsv", "/val.tsv"}) {
    std::ifstream in(dir + list);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t at = text.find(row);
    if (at != std::string::npos) {
      text.replace(at, row.size(), "u003\t" + std::to_string(utterances[3].frames) + "\t1");
    }
    std::ofstream(dir + list) << text;
  }

  Result result = run_cli("data check --config " + config_path + " --data " + dir);
  EXPECT_EQ(result.exit_code, 1);
  const std::string& out = result.output;
  EXPECT_NE(out.find(dir + "/waveforms/u001.npy (utterance u001): 1 non-finite value (1 NaN, 0 "
                           "Inf), the first at sample 17 (nan)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(dir + "/waveforms/u002.npy (utterance u002): 2-D array of shape [1, " +
                     std::to_string(n2) + "], expected a 1-D waveform"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(dir + "/waveforms/u003.npy (utterance u003): 1 samples for a mel of " +
                     std::to_string(utterances[3].frames) + " frames"),
            std::string::npos)
      << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 3) << out;
}

// A problem of the whole store (no linear targets where the config needs them) is one line
// naming how many utterances it touches, not one line per utterance.
TEST(DataCheck, AStoreWideProblemIsSaidOnce) {
  std::string plain_path = write_config("check_plain.yaml", "audio:\n  linear: false\n");
  tts::config::Config plain = tts::config::load_config(plain_path);
  std::string dir = tts::test::make_store(tts::test::temp_dir("check_store_wide"), plain,
                                          tts::test::varied_utterances(8), 2);
  std::string linear_path = write_config("check_linear.yaml", "audio:\n  linear: true\n");
  Result result = run_cli("data check --config " + linear_path + " --data " + dir, true);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  const std::string line = "all 8 utterances have no linear file but the config needs linear";
  const size_t first = result.output.find(line);
  EXPECT_NE(first, std::string::npos) << result.output;
  EXPECT_EQ(result.output.find(line, first + 1), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("utterance u001 has no linear file"), std::string::npos)
      << result.output;
}

TEST(DataCheck, MissingArgumentsAreUsageErrors) {
  EXPECT_EQ(run_cli("data check --data /nonexistent").exit_code, 2);
  EXPECT_EQ(run_cli("data").exit_code, 2);
}

}  // namespace
