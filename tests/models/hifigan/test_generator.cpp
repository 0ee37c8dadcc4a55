// The generator against jik876/hifi-gan's own: every fixture folder under tests/data/vocoders/
// with a generator file (hifigan_g.pt, its config.json, a mel and the audio jik876's Generator
// made of it in eval mode) must give that audio within 1e-5. Folders differ in resblock type,
// hop, mel channels and seed; any folder added in that layout is checked too.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>

#include "tts/checkpoint/state_dict.h"
#include "tts/core/error.h"
#include "tts/formats/npy.h"
#include "tts/formats/torch_file.h"
#include "tts/models/hifigan/conversion/jik876.h"
#include "tts/models/hifigan/layers/generator.h"

namespace fs = std::filesystem;
using namespace tts::hifigan;

namespace {

torch::Tensor load_npy(const std::string& path) {
  tts::formats::NpyArray array = tts::formats::read_npy(path);
  return torch::from_blob(array.data.data(), array.shape, torch::kFloat32).clone();
}

std::vector<std::string> fixture_folders() {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(std::string(TTS_TEST_DATA_DIR) + "/vocoders")) {
    if (fs::exists(entry.path() / "hifigan_g.pt")) out.push_back(entry.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST(HifiganGenerator, MatchesJik876OnEveryFixture) {
  const std::vector<std::string> folders = fixture_folders();
  ASSERT_GE(folders.size(), 2u);
  for (const std::string& dir : folders) {
    SCOPED_TRACE(dir);
    const tts::config::Config config =
        hifigan_config_from_json(dir + "/hifigan_config.json", tts::config::Config{});
    const HifiganImport imported = import_jik876(dir + "/hifigan_g.pt", "", "", config);
    Generator generator(config.hifigan, config.audio.n_mels);
    tts::checkpoint::StateDictOptions options;
    options.file = dir;
    tts::checkpoint::copy_matched(
        tts::checkpoint::match_state_dict(tts::checkpoint::model_tensors(*generator),
                                          imported.generator, options)
            .matched);
    generator->eval();
    const torch::Tensor mel = load_npy(dir + "/hifigan_mel.npy");
    const torch::Tensor expected = load_npy(dir + "/hifigan_audio.npy");
    torch::NoGradGuard no_grad;
    const torch::Tensor audio = generator->forward(mel);
    ASSERT_EQ(audio.sizes(), expected.sizes());
    EXPECT_EQ(audio.size(2), mel.size(2) * config.audio.hop_length);
    EXPECT_LT((audio - expected).abs().max().item<double>(), 1e-5);
  }
}

TEST(HifiganGenerator, ParameterNamesAreJik876Keys) {
  tts::config::HifiganOptions options;
  Generator generator(options, 80);
  const auto params = generator->named_parameters();
  ASSERT_NE(params.find("conv_pre.weight_g"), nullptr);
  ASSERT_NE(params.find("ups.3.weight_v"), nullptr);
  ASSERT_NE(params.find("resblocks.11.convs2.2.bias"), nullptr);
  ASSERT_NE(params.find("conv_post.weight_v"), nullptr);
  // jik876's V1 generator: 13.93 M parameters (weight_g included).
  int64_t count = 0;
  for (const auto& p : generator->parameters()) count += p.numel();
  EXPECT_EQ(params.size(), 3u * (1 + 4 + 12 * 6 + 1));
  EXPECT_GT(count, 13'900'000);
  EXPECT_LT(count, 14'000'000);
}

TEST(HifiganGenerator, RefusesAMelOfOtherChannels) {
  tts::config::HifiganOptions options;
  options.upsample_initial_channel = 32;
  Generator generator(options, 80);
  EXPECT_THROW(generator->forward(torch::zeros({1, 64, 4})), tts::Error);
}
