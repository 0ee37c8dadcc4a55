// Runs the real `tts-train config` executable.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>

#include "tts/config/config.h"

namespace {

struct Result {
  int exit_code;
  std::string output;
};

// Runs `tts-train ARGS`, capturing stdout (and stderr when `with_stderr`).
Result run_cli(const std::string& args, bool with_stderr = false) {
  std::string command =
      std::string(TTS_CLI_PATH) + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null");
  FILE* pipe = popen(command.c_str(), "r");
  EXPECT_NE(pipe, nullptr);
  std::string output;
  std::array<char, 4096> buffer{};
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) output.append(buffer.data(), n);
  int status = pclose(pipe);
  return {WEXITSTATUS(status), output};
}

std::string write_temp(const std::string& name, const std::string& text) {
  std::string path = std::string(TTS_TEST_TMP_DIR) + "/" + name;
  std::system(("mkdir -p " + std::string(TTS_TEST_TMP_DIR)).c_str());
  std::ofstream(path) << text;
  return path;
}

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

TEST(ConfigCommand, CheckExitsZeroForValidAndOneForInvalid) {
  EXPECT_EQ(run_cli("config --check " + kNvidia).exit_code, 0);
  std::string bad = write_temp("bad_range.yaml", "audio:\n  fmax: 20000\n");
  Result result = run_cli("config --check " + bad, true);
  EXPECT_EQ(result.exit_code, 1);
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
