// Runs the real `tts-train bench` on the tiny config and the small vocoder configs: one JSON line
// on stdout with the step time, the throughput, the parameter count and the phase breakdown.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <regex>
#include <string>

#include "cli_test_util.h"
#include "tts/formats/json_reader.h"

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

// The two ways of computing the decoder's per-step products train the same model: the same
// loss after the warm-up step's update, up to summation order.
TEST(BenchCommand, RecurrentProductPathsGiveTheSameLoss) {
  std::string args = "bench --config " + kTiny + " --batch 2 --text-len 7 --frames 10 --steps 1";
  Result kernel = run_cli(args + " --recurrent-products kernel");
  Result gemm = run_cli(args + " --recurrent-products gemm");
  Result fastest = run_cli(args + " --recurrent-products fastest");
  ASSERT_EQ(kernel.exit_code, 0) << kernel.output;
  ASSERT_EQ(gemm.exit_code, 0) << gemm.output;
  ASSERT_EQ(fastest.exit_code, 0) << fastest.output;
  EXPECT_NE(kernel.output.find("\"recurrent_products\": \"kernel\""), std::string::npos);
  // The shipped default is the kernel (one path: runs and ranks round alike).
  Result plain = run_cli(args);
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_NE(plain.output.find("\"recurrent_products\": \"kernel\""), std::string::npos)
      << plain.output;
  // Where the step stands against the machine: its FLOPs, the rate and a GEMM's.
  EXPECT_GT(json_number(plain.output, "step_gflop"), 0.0) << plain.output;
  EXPECT_GT(json_number(plain.output, "achieved_gflops"), 0.0) << plain.output;
  EXPECT_GT(json_number(plain.output, "peak_gemm_gflops"), 0.0) << plain.output;
  EXPECT_GT(json_number(plain.output, "fraction_of_peak"), 0.0) << plain.output;
  // The config's model.recurrent_products is the default of --recurrent-products.
  Result pinned = run_cli(args + " --set model.recurrent_products=gemm");
  ASSERT_EQ(pinned.exit_code, 0) << pinned.output;
  EXPECT_NE(pinned.output.find("\"recurrent_products\": \"gemm\""), std::string::npos)
      << pinned.output;
  EXPECT_NEAR(json_number(pinned.output, "loss"), json_number(gemm.output, "loss"),
              1e-5 * std::abs(json_number(gemm.output, "loss")));
  double loss = json_number(kernel.output, "loss");
  EXPECT_NEAR(json_number(gemm.output, "loss"), loss, 1e-4 * std::abs(loss));
  EXPECT_NEAR(json_number(fastest.output, "loss"), loss, 1e-4 * std::abs(loss));
}

// train.precision = bf16 (autocast) on the CPU: the bench says so and its first step's loss, from
// the same seed, is close to fp32's.
TEST(BenchCommand, Bf16RunsAndReportsItsPrecision) {
  std::string args = "bench --config " + kTiny + " --batch 2 --text-len 7 --frames 10 --steps 1";
  Result fp32 = run_cli(args);
  Result bf16 = run_cli(args + " --set train.precision=bf16");
  ASSERT_EQ(fp32.exit_code, 0) << fp32.output;
  ASSERT_EQ(bf16.exit_code, 0) << bf16.output;
  EXPECT_NE(bf16.output.find("\"precision\": \"bf16\""), std::string::npos) << bf16.output;
  double loss = json_number(fp32.output, "loss");
  EXPECT_NEAR(json_number(bf16.output, "loss"), loss, 0.05 * std::abs(loss));
}

// The vocoders' steps through the same bench: a window of the family's training size by default
// (hifigan.segment_size, wavenet.max_time_steps), another with --frames; samples a second; no
// FLOP count (counted for Tacotron-2 only); WaveNet's moving average is not a trained parameter.
TEST(BenchCommand, TimesEachVocoderFamilysStep) {
  struct Case {
    std::string config;
    std::string kind;
    int64_t window;  // samples
  };
  for (const Case& c :
       {Case{"hifigan_small.yaml", "hifigan", 4096}, Case{"wavenet_small.yaml", "wavenet", 5120}}) {
    const std::string args = "bench --config " + std::string(TTS_SOURCE_DIR) + "/configs/" +
                             c.config + " --batch 2 --steps 1 --threads 1";
    Result plain = run_cli(args);
    ASSERT_EQ(plain.exit_code, 0) << c.kind << ": " << plain.output;
    ASSERT_EQ(plain.output.find('\n'), plain.output.size() - 1) << "one line: " << plain.output;
    EXPECT_NE(plain.output.find("\"model\": \"" + c.kind + "\""), std::string::npos)
        << plain.output;
    EXPECT_EQ(json_number(plain.output, "samples"), c.window) << plain.output;
    EXPECT_EQ(json_number(plain.output, "frames"), c.window / 256) << plain.output;
    const double step = json_number(plain.output, "median_step_s");
    EXPECT_GT(step, 0);
    EXPECT_NEAR(json_number(plain.output, "samples_per_s"), 2 * c.window / step,
                0.01 * 2 * c.window / step);
    EXPECT_GT(json_number(plain.output, "params"), 1000);
    EXPECT_TRUE(std::isfinite(json_number(plain.output, "loss"))) << plain.output;
    EXPECT_GT(json_number(plain.output, "backward_s"), 0);
    EXPECT_TRUE(std::isnan(json_number(plain.output, "step_gflop"))) << plain.output;
    EXPECT_EQ(plain.output.find("text_len"), std::string::npos) << plain.output;

    Result shorter = run_cli(args + " --frames 8");
    ASSERT_EQ(shorter.exit_code, 0) << shorter.output;
    EXPECT_EQ(json_number(shorter.output, "samples"), 8 * 256) << shorter.output;
  }
  // Without the moving average, the same trained parameters.
  const std::string wavenet = "bench --config " + std::string(TTS_SOURCE_DIR) +
                              "/configs/wavenet_small.yaml" + " --batch 1 --frames 4 --steps 1";
  Result averaged = run_cli(wavenet);
  Result plain = run_cli(wavenet + " --set wavenet.exponential_moving_average=false");
  ASSERT_EQ(averaged.exit_code, 0) << averaged.output;
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_EQ(json_number(averaged.output, "params"), json_number(plain.output, "params"));
}

// A training iteration of every family reads nothing on the host (Note [No host reads in a
// step]): the gradient norm, the finite check, the Adam step counts and the losses stay on the
// device until a read point.
TEST(BenchCommand, ProfileOfAnIterationCountsNoHostSynchronization) {
  const std::string configs = std::string(TTS_SOURCE_DIR) + "/configs/";
  // The vocoders at batch 2: at batch 1 and 8 frames libtorch's CPU runs HiFi-GAN's dilated
  // convolutions through slow_conv_dilated, which fills its output from the bias with .item() (the
  // CPU kernel's own read, not the step's; CUDA runs cuDNN).
  for (const std::string& args : {"--config " + kTiny + " --batch 2 --text-len 12 --frames 40",
                                  "--config " + configs + "hifigan_small.yaml --batch 2",
                                  "--config " + configs + "wavenet_small.yaml --batch 2"}) {
    Result r = run_cli("bench " + args + " --steps 1 --threads 1 --profile");
    ASSERT_EQ(r.exit_code, 0) << args << ": " << r.output;
    EXPECT_EQ(json_number(r.output, "sync"), 0) << args << ": " << r.output;
  }
}

TEST(BenchCommand, BadArgumentsAreUsageErrors) {
  EXPECT_EQ(run_cli("bench --config " + kTiny + " --steps 0").exit_code, 2);
  EXPECT_EQ(run_cli("bench --config " + kTiny + " --recurrent-products blas").exit_code, 2);
  EXPECT_EQ(run_cli("bench --config " + kTiny + " --device tpu").exit_code, 2);
  EXPECT_EQ(run_cli("bench --config " + kTiny + " --frames -1").exit_code, 2);
  EXPECT_EQ(run_cli("bench").exit_code, 2);
}

// --profile counts what one iteration issues; for a family with decoder steps, per decoder step
// from two lengths: the counts grow with the decoder steps, so doubling --frames again gives the
// same per-step figures within a few operations (short runs pay a few more a step: 60 at 10
// steps, 52 past 50 on tiny.yaml, 2026-12-06).
TEST(BenchCommand, ProfileCountsOperatorsPerDecoderStepAndHostSynchronizations) {
  const std::string args =
      "bench --config " + kTiny + " --batch 2 --text-len 12 --steps 1 --threads 1 --profile";
  Result shorter = run_cli(args + " --frames 40");
  Result longer = run_cli(args + " --frames 80");
  ASSERT_EQ(shorter.exit_code, 0) << shorter.output;
  ASSERT_EQ(longer.exit_code, 0) << longer.output;
  for (const char* key : {"ops_forward_per_decoder_step", "nodes_backward_per_decoder_step",
                          "ops_per_decoder_step", "allocations_per_decoder_step"}) {
    EXPECT_GT(json_number(shorter.output, key), 0) << key << ": " << shorter.output;
    EXPECT_NEAR(json_number(shorter.output, key), json_number(longer.output, key),
                0.1 * json_number(shorter.output, key))
        << key;
  }
  EXPECT_EQ(json_number(shorter.output, "ops_per_decoder_step"),
            json_number(shorter.output, "ops_forward_per_decoder_step") +
                json_number(shorter.output, "nodes_backward_per_decoder_step"));
  EXPECT_GT(json_number(longer.output, "ops_forward"), json_number(shorter.output, "ops_forward"));
  EXPECT_GE(json_number(shorter.output, "sync"), 0);
  const double outside = json_number(shorter.output, "outside_ops_share");
  EXPECT_GE(outside, 0);
  EXPECT_LE(outside, 1);
  // A vocoder has no decoder steps: its iteration's counts alone.
  Result vocoder = run_cli("bench --config " + std::string(TTS_SOURCE_DIR) +
                           "/configs/hifigan_small.yaml --batch 1 --frames 8 --steps 1 --profile");
  ASSERT_EQ(vocoder.exit_code, 0) << vocoder.output;
  EXPECT_GT(json_number(vocoder.output, "ops_forward"), 0) << vocoder.output;
  EXPECT_GT(json_number(vocoder.output, "nodes_backward"), 0) << vocoder.output;
  EXPECT_TRUE(std::isnan(json_number(vocoder.output, "ops_per_decoder_step"))) << vocoder.output;
  // Where its time goes, largest share first: a HiFi-GAN step's ten largest include its
  // convolutions (which comes first depends on the machine).
  const size_t shares = vocoder.output.find("\"time_share_by_name\": \"");
  ASSERT_NE(shares, std::string::npos) << vocoder.output;
  std::string listed = vocoder.output.substr(shares + 23);
  listed = listed.substr(0, listed.find('"'));
  std::transform(listed.begin(), listed.end(), listed.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  EXPECT_NE(listed.find("conv"), std::string::npos)
      << listed;  // aten::conv1d, ConvolutionBackward0
  EXPECT_NE(listed.find('%'), std::string::npos) << listed;
}

// --json: stdout holds the JSON object alone (progress and logs go to stderr), so a script reads
// it whole.
TEST(BenchCommand, ProfileJsonPrintsOneJsonObjectAloneOnStdout) {
  Result result = run_cli("bench --config " + kTiny +
                          " --batch 2 --text-len 12 --frames 20 --steps 1 --threads 1 --profile "
                          "--json");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  ASSERT_EQ(result.output.find('\n'), result.output.size() - 1) << "one line: " << result.output;
  const tts::formats::JsonValue json = tts::formats::parse_json(result.output, "bench stdout");
  ASSERT_EQ(json.kind, tts::formats::JsonValue::Kind::kObject) << result.output;
  for (const char* key :
       {"ops_forward_per_decoder_step", "nodes_backward_per_decoder_step", "sync"}) {
    const tts::formats::JsonValue* value = json.find(key);
    ASSERT_NE(value, nullptr) << key << ": " << result.output;
    EXPECT_EQ(value->kind, tts::formats::JsonValue::Kind::kNumber) << key;
  }
  // The logs are still written, to stderr.
  Result both = run_cli("bench --config " + kTiny +
                            " --batch 2 --text-len 12 --frames 20 --steps 1 --threads 1 --json",
                        true);
  ASSERT_EQ(both.exit_code, 0) << both.output;
  EXPECT_NE(both.output.find("step 1/1"), std::string::npos) << both.output;
}
