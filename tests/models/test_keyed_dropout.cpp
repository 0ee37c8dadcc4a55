// Keyed dropout: an utterance's mask depends on the seed, the step, its id and the layer, never
// on the batch it lands in, its row or the batch's padded length; libtorch's stream is untouched.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "tts/models/keyed_dropout.h"

namespace tts::models {
namespace {

TEST(KeyedDropout, AnUtterancesMaskIsItsOwnWhateverItIsBatchedWith) {
  const KeyedDropout alone(1234, 7, {"b"});
  const KeyedDropout batched(1234, 7, {"a", "b", "c"});
  // "b" alone (length 5, padded to 5) and second in a batch padded to 9.
  torch::Tensor own = alone.mask(0x100, 0.5, 5, 16, {5}, torch::kFloat32);
  torch::Tensor in_batch = batched.mask(0x100, 0.5, 9, 16, {9, 5, 3}, torch::kFloat32);
  ASSERT_EQ(in_batch.sizes(), (std::vector<int64_t>{3, 9, 16}));
  EXPECT_TRUE(torch::equal(own[0], in_batch[1].narrow(0, 0, 5)));
  // Past its length the mask is 0; inside it only 0 or 1 / (1 - p).
  EXPECT_EQ(in_batch[1].narrow(0, 5, 4).abs().sum().item<double>(), 0.0);
  torch::Tensor values = std::get<0>(at::_unique(in_batch[1].narrow(0, 0, 5)));
  EXPECT_TRUE(torch::equal(values, torch::tensor({0.0f, 2.0f})));
  // About half kept (80 draws).
  const double kept = (own > 0).sum().item<double>() / static_cast<double>(own.numel());
  EXPECT_GT(kept, 0.3);
  EXPECT_LT(kept, 0.7);
}

TEST(KeyedDropout, TheSeedStepIdAndLayerEachChangeTheMask) {
  auto mask = [](uint64_t seed, int64_t step, const std::string& id, uint64_t layer) {
    return KeyedDropout(seed, step, {id}).mask(layer, 0.5, 8, 32, {8}, torch::kFloat32);
  };
  const torch::Tensor base = mask(1, 1, "x", 1);
  EXPECT_TRUE(torch::equal(base, mask(1, 1, "x", 1))) << "repeatable";
  EXPECT_FALSE(torch::equal(base, mask(2, 1, "x", 1)));
  EXPECT_FALSE(torch::equal(base, mask(1, 2, "x", 1)));
  EXPECT_FALSE(torch::equal(base, mask(1, 1, "y", 1)));
  EXPECT_FALSE(torch::equal(base, mask(1, 1, "x", 2)));
}

TEST(KeyedDropout, LeavesLibtorchsStreamAsItWas) {
  torch::manual_seed(99);
  const torch::Tensor expected = torch::rand({4});
  torch::manual_seed(99);
  KeyedDropout(5, 3, {"a", "b"}).mask(1, 0.1, 6, 4, {6, 2}, torch::kFloat32);
  EXPECT_TRUE(torch::equal(torch::rand({4}), expected));
}

TEST(KeyedDropout, RefusesLengthsThatDoNotFitTheBatch) {
  const KeyedDropout keys(1, 1, {"a", "b"});
  EXPECT_THROW(keys.mask(1, 0.5, 4, 2, {4}, torch::kFloat32), std::exception);
  EXPECT_THROW(keys.mask(1, 0.5, 4, 2, {4, 5}, torch::kFloat32), std::exception);
  EXPECT_THROW(keys.mask(1, 0.0, 4, 2, {4, 4}, torch::kFloat32), std::exception);
}

}  // namespace
}  // namespace tts::models
