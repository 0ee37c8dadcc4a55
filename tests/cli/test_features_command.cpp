// Runs the real `tts-train features` executable: targets to .npy, Griffin-Lim back to WAV, and
// the errors a user meets.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_test_util.h"
#include "tts/audio/audio_io.h"
#include "tts/audio/audio_processor.h"
#include "tts/config/config.h"
#include "tts/formats/npy.h"

namespace {

using Result = tts::test::CliResult;

// Output is stdout and stderr together.
Result run_cli(const std::string& args) { return tts::test::run_cli(args, true); }

std::string tmp(const std::string& name) {
  std::string dir = std::string(TTS_TEST_TMP_DIR) + "/features_command";
  std::filesystem::create_directories(dir);
  return dir + "/" + name;
}

const std::string kNvidia = std::string(TTS_SOURCE_DIR) + "/configs/ljspeech_tacotron2.yaml";
const std::string kRayhane =
    std::string(TTS_SOURCE_DIR) + "/configs/ljspeech_tacotron2_linear.yaml";
const std::string kChirp = std::string(TTS_TEST_DATA_DIR) + "/audio/chirp_nvidia.wav";

torch::Tensor to_tensor(tts::formats::NpyArray array) {
  return torch::from_blob(array.data.data(), array.shape, torch::kFloat32).clone();
}

TEST(FeaturesCommand, WritesTheSameTargetsAsTheLibrary) {
  for (const std::string& config_path : {kNvidia, kRayhane}) {
    const std::string mel = tmp("chirp.mel.npy");
    const std::string linear = tmp("chirp.linear.npy");
    std::filesystem::remove(linear);
    Result result = run_cli("features --config " + config_path + " --wav " + kChirp + " --mel " +
                            mel + " --linear " + linear + " --set audio.linear=false");
    ASSERT_EQ(result.exit_code, 0) << result.output;
    tts::config::Config config = tts::config::load_config(config_path, {"audio.linear=false"});
    tts::audio::Features want = tts::audio::AudioProcessor(config.audio).compute_file(kChirp, true);
    tts::formats::NpyHeader header = tts::formats::read_npy_header(mel);
    EXPECT_EQ(header.dtype, "<f4");
    EXPECT_FALSE(header.fortran_order);
    EXPECT_EQ(header.shape, want.mel.sizes().vec());
    EXPECT_EQ(header.shape[1], config.audio.n_mels);
    EXPECT_TRUE(torch::equal(to_tensor(tts::formats::read_npy(mel)), want.mel));
    // --linear writes the linear target even with audio.linear off.
    EXPECT_TRUE(torch::equal(to_tensor(tts::formats::read_npy(linear)), want.linear));
    EXPECT_EQ(tts::formats::read_npy_header(linear).shape[1], config.audio.n_fft / 2 + 1);
  }
}

TEST(FeaturesCommand, GriffinLimWritesAWavWhoseMelMatches) {
  const std::string mel = tmp("gl.mel.npy");
  const std::string wav = tmp("gl.wav");
  ASSERT_EQ(
      run_cli("features --config " + kNvidia + " --wav " + kChirp + " --mel " + mel).exit_code, 0);
  Result result = run_cli("features --config " + kNvidia + " --mel " + mel + " --griffin-lim " +
                          wav + " --set audio.griffin_lim_power=1.0");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  tts::config::Config config = tts::config::load_config(kNvidia);
  config.audio.trim = false;
  std::vector<float> samples = tts::audio::read_audio(wav, config.audio);
  torch::Tensor target = to_tensor(tts::formats::read_npy(mel));
  tts::audio::AudioProcessor processor(config.audio);
  torch::Tensor again = processor.compute(samples, false).mel;
  ASSERT_EQ(again.sizes(), target.sizes());
  // Log-mel units: the reconstruction is close on average (GL leaves phase errors).
  EXPECT_LT((again - target).abs().mean().item<float>(), 0.5);
  // Linear targets invert too.
  const std::string linear = tmp("gl.linear.npy");
  ASSERT_EQ(run_cli("features --config " + kNvidia + " --wav " + kChirp + " --mel " + mel +
                    " --linear " + linear)
                .exit_code,
            0);
  EXPECT_EQ(run_cli("features --config " + kNvidia + " --linear " + linear + " --griffin-lim " +
                    tmp("gl_linear.wav"))
                .exit_code,
            0);
}

TEST(FeaturesCommand, ErrorsNameTheFileAndExitNonZero) {
  const std::string silence = tmp("silence.wav");
  tts::audio::write_wav(silence, std::vector<float>(22050, 0.f), 22050);
  Result result =
      run_cli("features --config " + kNvidia + " --wav " + silence + " --mel " + tmp("s.npy"));
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find(silence), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("all silence"), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("terminate"), std::string::npos) << result.output;
  EXPECT_FALSE(std::filesystem::exists(tmp("s.npy")));

  // A [n_mels, frames] array (librosa's layout) is refused with the fix.
  const std::string transposed = tmp("transposed.npy");
  std::vector<float> zeros(80 * 50, 0.f);
  tts::formats::write_npy(transposed, zeros.data(), {80, 50});
  result = run_cli("features --config " + kNvidia + " --mel " + transposed + " --griffin-lim " +
                   tmp("t.wav"));
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("transposed"), std::string::npos) << result.output;

  EXPECT_EQ(run_cli("features --config " + kNvidia + " --wav " + kChirp).exit_code, 2);
  EXPECT_EQ(run_cli("features --config " + kNvidia + " --mel x.npy").exit_code, 2);
}

}  // namespace
