// Runs the real `tts-train bench` on the tiny config: one JSON line on stdout with the step
// time, the throughput, the parameter count and the phase breakdown.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <regex>
#include <string>

#include "cli_test_util.h"

namespace {

using Result = tts::test::CliResult;
using tts::test::run_cli;

// The number after "key": in a flat JSON object; NaN when absent.
double json_number(const std::string& json, const std::string& key) {
  std::smatch match;
  std::regex pattern("\"" + key + "\": (-?[0-9.eE+-]+)");
  return std::regex_search(json, match, pattern) ? std::stod(match[1]) : std::nan("");
}

const std::string kTiny = std::string(TTS_SOURCE_DIR) + "/configs/tiny.yaml";

}  // namespace

TEST(BenchCommand, PrintsOneJsonLineWithTimesThroughputAndParameters) {
  Result result = run_cli("bench --config " + kTiny +
                          " --batch 2 --text-len 12 --frames 21 --steps 2 --threads 1");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  ASSERT_EQ(result.output.find('\n'), result.output.size() - 1) << "one line: " << result.output;
  EXPECT_EQ(result.output.front(), '{');
  double step = json_number(result.output, "median_step_s");
  double forward = json_number(result.output, "forward_s");
  double backward = json_number(result.output, "backward_s");
  double optimizer = json_number(result.output, "optimizer_s");
  EXPECT_GT(step, 0);
  EXPECT_GT(forward, 0);
  EXPECT_GT(backward, 0);
  EXPECT_GE(optimizer, 0);
  // tiny.yaml has r = 2: 21 frames are padded to 22.
  EXPECT_EQ(json_number(result.output, "frames"), 22);
  EXPECT_NEAR(json_number(result.output, "mel_frames_per_s"), 2 * 22 / step, 0.01 * 44 / step);
  EXPECT_GT(json_number(result.output, "params"), 100000);
  EXPECT_TRUE(std::isfinite(json_number(result.output, "loss")));
}

TEST(BenchCommand, LinearHeadAddsParameters) {
  std::string args = "bench --config " + kTiny + " --batch 1 --text-len 5 --frames 8 --steps 1";
  Result plain = run_cli(args);
  Result linear = run_cli(args + " --set model.predict_linear=true");
  ASSERT_EQ(plain.exit_code, 0);
  ASSERT_EQ(linear.exit_code, 0);
  EXPECT_GT(json_number(linear.output, "params"), json_number(plain.output, "params"));
}

TEST(BenchCommand, BadArgumentsAreUsageErrors) {
  EXPECT_EQ(run_cli("bench --config " + kTiny + " --steps 0").exit_code, 2);
  EXPECT_EQ(run_cli("bench --config " + kTiny + " --device tpu").exit_code, 2);
  EXPECT_EQ(run_cli("bench").exit_code, 2);
}
