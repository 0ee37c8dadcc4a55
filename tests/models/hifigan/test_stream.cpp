// HiFi-GAN spoken a chunk of frames at a time: the context a chunk needs comes from the
// generator's layers (receptive_field), no narrower than the reach measured by perturbing one
// frame and at most a frame wider; chunks of every plan (one frame, odd sizes, one chunk),
// concatenated, are the whole mel's audio within 1e-4 of full scale, for every jik876 fixture
// (V1, V2, V3 shapes).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>

#include "tts/checkpoint/state_dict.h"
#include "tts/formats/npy.h"
#include "tts/models/convolution_stream.h"
#include "tts/models/hifigan/conversion/jik876.h"
#include "tts/models/hifigan/layers/generator.h"

namespace fs = std::filesystem;
using namespace tts::hifigan;
using tts::models::ChunkPlan;

namespace {

torch::Tensor load_npy(const std::string& path) {
  tts::formats::NpyArray array = tts::formats::read_npy(path);
  return torch::from_blob(array.data.data(), array.shape, torch::kFloat32).clone();
}

struct Loaded {
  tts::config::Config config;
  Generator generator{nullptr};
  torch::Tensor mel;  // [n_mels, frames]
};

std::vector<Loaded> fixtures() {
  std::vector<Loaded> out;
  std::vector<std::string> folders;
  for (const auto& entry : fs::directory_iterator(std::string(TTS_TEST_DATA_DIR) + "/vocoders")) {
    if (fs::exists(entry.path() / "hifigan_g.pt")) folders.push_back(entry.path().string());
  }
  std::sort(folders.begin(), folders.end());
  for (const std::string& dir : folders) {
    Loaded l;
    l.config = hifigan_config_from_json(dir + "/hifigan_config.json", tts::config::Config{});
    const HifiganImport imported = import_jik876(dir + "/hifigan_g.pt", "", "", l.config);
    l.generator = Generator(l.config.hifigan, l.config.audio.n_mels);
    tts::checkpoint::StateDictOptions options;
    options.file = dir;
    tts::checkpoint::copy_matched(
        tts::checkpoint::match_state_dict(tts::checkpoint::model_tensors(*l.generator),
                                          imported.generator, options)
            .matched);
    l.generator->eval();
    l.mel = load_npy(dir + "/hifigan_mel.npy")[0];
    out.push_back(std::move(l));
  }
  return out;
}

}  // namespace

TEST(HifiganStream, TheDerivedContextCoversTheMeasuredReach) {
  for (Loaded& l : fixtures()) {
    torch::NoGradGuard no_grad;
    const int64_t hop = l.config.audio.hop_length;
    const tts::models::ReceptiveField field = receptive_field(l.config.hifigan);
    EXPECT_EQ(field.scale(), hop);
    // The samples of the middle frame of a long random mel, and how far away a changed frame
    // still moves them.
    const int64_t frames = 2 * (field.left() + field.right()) + 9;
    const int64_t middle = frames / 2;
    torch::manual_seed(3);
    const torch::Tensor mel = torch::randn({1, l.config.audio.n_mels, frames});
    const torch::Tensor base = l.generator->forward(mel).narrow(2, middle * hop, hop);
    int64_t left = 0, right = 0;
    for (int64_t f = 0; f < frames; ++f) {
      torch::Tensor moved = mel.clone();
      moved.select(2, f).add_(1.0);
      const double change = (l.generator->forward(moved).narrow(2, middle * hop, hop) - base)
                                .abs()
                                .max()
                                .item<double>();
      if (change == 0) continue;
      if (f < middle) left = std::max(left, middle - f);
      if (f > middle) right = std::max(right, f - middle);
    }
    EXPECT_GE(field.left(), left);
    EXPECT_GE(field.right(), right);
    EXPECT_LE(field.left(), left + 1);
    EXPECT_LE(field.right(), right + 1);
  }
}

TEST(HifiganStream, ChunksOfEveryPlanAreTheWholeMelsAudio) {
  for (Loaded& l : fixtures()) {
    torch::NoGradGuard no_grad;
    const int64_t hop = l.config.audio.hop_length;
    const int64_t n_mels = l.config.audio.n_mels;
    const torch::Tensor whole = l.generator->forward(l.mel.unsqueeze(0)).reshape({-1});
    const torch::Tensor frames = l.mel.t().contiguous();  // [frames, n_mels]
    auto network = [&](const torch::Tensor& window) {
      return l.generator->forward(window.t().unsqueeze(0)).reshape({-1});
    };
    for (const ChunkPlan& plan :
         {ChunkPlan::whole(), ChunkPlan{1, 1}, ChunkPlan{3, 5}, ChunkPlan::streaming()}) {
      for (int64_t pushed : {int64_t{1}, int64_t{4}, frames.size(0)}) {
        SCOPED_TRACE(plan.describe() + ", pushed " + std::to_string(pushed) + " at a time");
        tts::models::ConvolutionStream stream(network, n_mels, hop,
                                              receptive_field(l.config.hifigan), plan);
        std::vector<float> audio;
        for (int64_t f = 0; f < frames.size(0); f += pushed) {
          const int64_t n = std::min(pushed, frames.size(0) - f);
          const std::vector<float> out =
              stream.push(frames.narrow(0, f, n), f + n == frames.size(0));
          audio.insert(audio.end(), out.begin(), out.end());
        }
        ASSERT_EQ(static_cast<int64_t>(audio.size()), whole.numel());
        const torch::Tensor streamed = torch::from_blob(audio.data(), {whole.numel()});
        EXPECT_LT((streamed - whole).abs().max().item<double>(), 1e-4);
        if (plan.is_whole()) EXPECT_TRUE(torch::equal(streamed, whole));
      }
    }
  }
}
