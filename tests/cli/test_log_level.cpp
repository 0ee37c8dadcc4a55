// The log level has one rule: --log-level over the config's logging.level over info. A command
// that reads a config (bench here) applies it; an unknown name is a usage error listing the
// levels.
#include <gtest/gtest.h>

#include <string>

#include "cli_test_util.h"

namespace {

using tts::test::CliResult;
using tts::test::run_cli;

const std::string kBench = "bench --config " + std::string(TTS_SOURCE_DIR) +
                           "/configs/tiny.yaml --batch 1 --text-len 5 --frames 8 --steps 1";

bool has_info_line(const std::string& output) {
  return output.find("[bench] info:") != std::string::npos;
}

}  // namespace

TEST(LogLevel, FlagOverConfigOverDefault) {
  CliResult plain = run_cli(kBench, true);
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_TRUE(has_info_line(plain.output)) << "info by default\n" << plain.output;

  CliResult quiet = run_cli(kBench + " --set logging.level=warn", true);
  ASSERT_EQ(quiet.exit_code, 0) << quiet.output;
  EXPECT_FALSE(has_info_line(quiet.output)) << "the config's warn\n" << quiet.output;

  CliResult flag = run_cli("--log-level info " + kBench + " --set logging.level=warn", true);
  ASSERT_EQ(flag.exit_code, 0) << flag.output;
  EXPECT_TRUE(has_info_line(flag.output)) << "the flag over the config\n" << flag.output;

  CliResult off = run_cli("--log-level off " + kBench, true);
  ASSERT_EQ(off.exit_code, 0) << off.output;
  EXPECT_FALSE(has_info_line(off.output)) << off.output;
}

TEST(LogLevel, AnUnknownLevelIsAUsageErrorListingTheLevels) {
  CliResult result = run_cli("--log-level loud " + kBench, true);
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--log-level 'loud'"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("trace, debug, info, warn, error, off"), std::string::npos)
      << result.output;
}
