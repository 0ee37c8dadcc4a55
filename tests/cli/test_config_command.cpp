// Runs the real `tts-train config` executable.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>

#include "cli_test_util.h"
#include "tts/config/config.h"

using tts::test::run_cli;
using tts::test::write_temp;
using Result = tts::test::CliResult;

namespace {

const std::string kNvidia = std::string(TTS_SOURCE_DIR) + "/configs/ljspeech_tacotron2.yaml";

}  // namespace

TEST(ConfigCommand, PrintsTheResolvedConfigOnStdoutThatLoadsBack) {
  Result result = run_cli("config --config " + kNvidia + " --set train.batch_size=12");
  ASSERT_EQ(result.exit_code, 0);
  tts::config::Config printed = tts::config::parse_config(result.output, "stdout");
  EXPECT_EQ(printed.train.batch_size, 12);
  EXPECT_TRUE(printed == tts::config::load_config(kNvidia, {"train.batch_size=12"}));
}

TEST(ConfigCommand, MisspelledKeyFailsWithSuggestionAndExitCode2) {
  std::string path = write_temp("misspelled.yaml", "audio:\n  hop_lenght: 200\n");
  Result result = run_cli("config --config " + path, true);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.output.find("audio.hop_lenght: unknown key; did you mean audio.hop_length?"),
            std::string::npos)
      << result.output;
  EXPECT_EQ(result.output.find("terminate"), std::string::npos) << result.output;
}

// An invalid config exits 2, as a config error does in every command (the README's exit codes).
TEST(ConfigCommand, CheckExitsZeroForValidAndTwoForInvalid) {
  EXPECT_EQ(run_cli("config --check " + kNvidia).exit_code, 0);
  std::string bad = write_temp("bad_range.yaml", "audio:\n  fmax: 20000\n");
  Result result = run_cli("config --check " + bad, true);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.output.find("audio.fmax"), std::string::npos) << result.output;
}

TEST(ConfigCommand, UsageErrorsExitWithCode2) {
  EXPECT_EQ(run_cli("no-such-command").exit_code, 2);
  EXPECT_EQ(run_cli("config --set nonsense").exit_code, 2);
  EXPECT_EQ(run_cli("--help").exit_code, 0);
  Result version = run_cli("--version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_NE(version.output.find("tts-train"), std::string::npos);
}
