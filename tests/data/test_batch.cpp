// Collation: shapes, padding to a multiple of r, values, stop targets, text padding and order.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "tts/core/error.h"
#include "tts/data/batch.h"

namespace {

using tts::data::Example;

Example example(const std::string& id, int64_t frames, size_t text_length, int64_t n_mels,
                int64_t n_linear, float value) {
  Example e;
  e.id = id;
  for (size_t i = 0; i < text_length; ++i) e.text.push_back(static_cast<int64_t>(i + 1));
  e.mel = torch::full({frames, n_mels}, value);
  if (n_linear > 0) e.linear = torch::full({frames, n_linear}, -value);
  return e;
}

TEST(Collate, PadsMelsToAMultipleOfRWithStopTargetsAndLengths) {
  for (int r : {1, 2, 3, 5}) {
    SCOPED_TRACE("r = " + std::to_string(r));
    std::vector<Example> examples = {example("a", 7, 4, 80, 0, 1.0f),
                                     example("b", 11, 9, 80, 0, 2.0f),
                                     example("c", 3, 2, 80, 0, 3.0f)};
    tts::data::Batch batch = tts::data::collate(examples, r);
    const int64_t t_mel = (11 + r - 1) / r * r;
    // Sorted by text length, longest first: b, a, c.
    ASSERT_EQ(batch.ids, (std::vector<std::string>{"b", "a", "c"}));
    EXPECT_EQ(batch.mel.sizes(), (std::vector<int64_t>{3, t_mel, 80}));
    EXPECT_EQ(batch.mel.scalar_type(), torch::kFloat32);
    EXPECT_EQ(batch.mel_lengths.scalar_type(), torch::kInt64);
    EXPECT_TRUE(batch.mel_lengths.equal(torch::tensor({11, 7, 3}, torch::kInt64)));
    EXPECT_TRUE(batch.text_lengths.equal(torch::tensor({9, 4, 2}, torch::kInt64)));
    EXPECT_EQ(batch.padded_frames(), 3 * t_mel);
    EXPECT_EQ(batch.real_frames(), 21);
    EXPECT_FALSE(batch.linear.defined());
    const std::vector<int64_t> lengths = {11, 7, 3};
    const std::vector<float> values = {2.0f, 1.0f, 3.0f};
    for (int64_t i = 0; i < 3; ++i) {
      const int64_t n = lengths[i];
      EXPECT_TRUE(batch.mel[i].narrow(0, 0, n).eq(values[i]).all().item<bool>());
      EXPECT_TRUE(batch.mel[i].narrow(0, n, t_mel - n).eq(0).all().item<bool>());
      // NVIDIA's gate target: 0 before the last real frame, 1 from it on.
      EXPECT_EQ(batch.stop[i].narrow(0, 0, n - 1).sum().item<float>(), 0.0f);
      EXPECT_TRUE(batch.stop[i].narrow(0, n - 1, t_mel - n + 1).eq(1).all().item<bool>());
    }
  }
}

TEST(Collate, PadsTextWithZeroAndCarriesLinearTargets) {
  std::vector<Example> examples = {example("short", 5, 3, 4, 9, 1.5f),
                                   example("long", 8, 6, 4, 9, 2.5f)};
  tts::data::Batch batch = tts::data::collate(examples, 2);
  ASSERT_EQ(batch.ids, (std::vector<std::string>{"long", "short"}));
  EXPECT_EQ(batch.text.sizes(), (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(batch.text.scalar_type(), torch::kInt64);
  EXPECT_TRUE(batch.text[0].equal(torch::tensor({1, 2, 3, 4, 5, 6}, torch::kInt64)));
  EXPECT_TRUE(batch.text[1].equal(torch::tensor({1, 2, 3, 0, 0, 0}, torch::kInt64)));
  ASSERT_TRUE(batch.linear.defined());
  EXPECT_EQ(batch.linear.sizes(), (std::vector<int64_t>{2, 8, 9}));
  EXPECT_TRUE(batch.linear[1].narrow(0, 0, 5).eq(-1.5f).all().item<bool>());
  EXPECT_TRUE(batch.linear[1].narrow(0, 5, 3).eq(0).all().item<bool>());
}

TEST(Collate, RejectsInconsistentShapesNamingTheUtterance) {
  std::vector<Example> examples = {example("x", 5, 3, 80, 0, 1.0f),
                                   example("y", 5, 3, 81, 0, 1.0f)};
  try {
    tts::data::collate(examples, 1);
    FAIL() << "collated mels of different widths";
  } catch (const tts::Error& e) {
    EXPECT_NE(std::string(e.what()).find("utterance y"), std::string::npos) << e.what();
  }
  EXPECT_THROW(tts::data::collate({}, 1), tts::Error);
}

TEST(Batch, ToDeviceKeepsEveryTensorAndId) {
  tts::data::Batch batch =
      tts::data::collate({example("a", 4, 2, 3, 5, 1.0f), example("b", 2, 1, 3, 5, 2.0f)}, 1);
  batch.global_real_frames = 17;
  tts::data::Batch moved = batch.to(torch::kCPU, true);
  EXPECT_EQ(moved.real_frames(), 6);
  EXPECT_EQ(moved.global_real_frames, 17);
  EXPECT_TRUE(moved.mel.equal(batch.mel));
  EXPECT_TRUE(moved.linear.equal(batch.linear));
  EXPECT_TRUE(moved.stop.equal(batch.stop));
  EXPECT_EQ(moved.ids, batch.ids);
}

TEST(Batch, PinnedCopiesReachCudaUnchanged) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "pinned memory needs CUDA";
  tts::data::Batch batch =
      tts::data::collate({example("a", 4, 2, 3, 5, 1.0f), example("b", 2, 1, 3, 5, 2.0f)}, 1);
  tts::data::Batch pinned = batch.pin_memory();
  EXPECT_TRUE(pinned.mel.is_pinned());
  tts::data::Batch on_gpu = pinned.to(torch::kCUDA, true);
  EXPECT_TRUE(on_gpu.mel.is_cuda());
  EXPECT_TRUE(on_gpu.mel.cpu().equal(batch.mel));
}

}  // namespace

namespace {

// Each utterance's speaker row follows it through the sort; a batch without rows has none.
TEST(Collate, SpeakerRowsFollowTheirUtterances) {
  std::vector<Example> examples = {example("a", 7, 4, 8, 0, 1.0f), example("b", 11, 9, 8, 0, 2.0f),
                                   example("c", 3, 2, 8, 0, 3.0f)};
  EXPECT_FALSE(tts::data::collate(examples, 1).speakers.defined());
  examples[0].speaker = 2;
  EXPECT_THROW(tts::data::collate(examples, 1), tts::Error);  // rows for some utterances only
  examples[1].speaker = 0;
  examples[2].speaker = 1;
  tts::data::Batch batch = tts::data::collate(examples, 1);
  ASSERT_EQ(batch.ids, (std::vector<std::string>{"b", "a", "c"}));
  EXPECT_TRUE(batch.speakers.equal(torch::tensor({0, 2, 1}, torch::kInt64)));
  EXPECT_TRUE(batch.to(torch::kCPU).speakers.equal(batch.speakers));
}

}  // namespace
