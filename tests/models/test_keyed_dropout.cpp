// Keyed dropout: an utterance's mask depends on the seed, the step, its id and the layer, never
// on the batch it lands in, its row or the batch's padded length; libtorch's stream is untouched;
// the keys made on the device and the masks made by tensor operations (what CUDA runs) are the
// host's and the CPU loop's, bit for bit.
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
  EXPECT_THROW(keys.mask(1, 0.5, 4, 2, torch::tensor({4.0, 4.0}), torch::kFloat32),
               std::exception);  // float lengths
  EXPECT_THROW(keys.mask(1, 0.5, 1 << 20, 1 << 13, {4, 4}, torch::kFloat32),
               std::exception);  // 2^33 positions a row: past the 32-bit counter
  EXPECT_THROW(keys.mask(1, 0.0, 4, 2, {4, 4}, torch::kFloat32), std::exception);
}

TEST(KeyedDropout, Mix32OnTensorsIsTheScalarHash) {
  std::vector<int64_t> values{0, 1, 2, 0x7fffffff, 0x80000000LL, 0xfffffffeLL, 0xffffffffLL};
  const torch::Tensor random = torch::randint(0, 1LL << 32, {1000}, torch::kInt64);
  for (int64_t i = 0; i < random.size(0); ++i) values.push_back(random[i].item<int64_t>());
  const torch::Tensor mixed = mix32(torch::tensor(values, torch::kInt64));
  for (size_t i = 0; i < values.size(); ++i) {
    ASSERT_EQ(mixed[static_cast<int64_t>(i)].item<int64_t>(),
              static_cast<int64_t>(mix32(static_cast<uint32_t>(values[i]))))
        << values[i];
  }
}

TEST(KeyedDropout, KeysMadeOnTheDeviceAreTheHostsKeys) {
  const std::vector<std::string> ids{"LJ001-0001", "LJ050-0278", "", "speaker/x"};
  std::vector<int64_t> utterance_keys;
  for (const std::string& id : ids) utterance_keys.push_back(utterance_key(id));
  for (const int64_t step : {int64_t{1}, int64_t{77}, int64_t{1} << 33}) {
    for (const uint64_t seed : {uint64_t{0}, uint64_t{1234}, ~uint64_t{0}}) {
      const KeyedDropout host(seed, step, ids);
      const KeyedDropout device(seed, torch::scalar_tensor(step, torch::kInt64),
                                torch::tensor(utterance_keys, torch::kInt64));
      EXPECT_TRUE(torch::equal(host.keys(), device.keys())) << seed << " " << step;
      EXPECT_GE(host.keys().min().item<int64_t>(), 0);
      EXPECT_LT(host.keys().max().item<int64_t>(), int64_t{1} << 32);
    }
  }
}

TEST(KeyedDropout, TensorOperationsGiveTheCpuLoopsMask) {
  const KeyedDropout keys(99, 12, {"a", "b", "c"});
  for (const double p : {0.1, 0.5, 0.9}) {
    for (const auto dtype : {torch::kFloat32, torch::kFloat64}) {
      const torch::Tensor lengths = torch::tensor({7, 0, 30}, torch::kInt64);  // 30: past T
      const torch::Tensor loop = keys.mask(0x301, p, 9, 33, lengths, dtype);
      const torch::Tensor ops = keys.mask_by_tensor_operations(0x301, p, 9, 33, lengths, dtype);
      ASSERT_EQ(loop.scalar_type(), dtype);
      EXPECT_TRUE(torch::equal(loop, ops)) << p << " " << dtype;
      EXPECT_EQ(loop[1].abs().sum().item<double>(), 0.0) << "length 0";
      EXPECT_EQ(loop[0].narrow(0, 7, 2).abs().sum().item<double>(), 0.0) << "past the length";
      EXPECT_GT(loop[2].narrow(0, 8, 1).abs().sum().item<double>(), 0.0) << "a length past T";
    }
  }
}

TEST(KeyedDropout, KeepsOneMinusPAndItsRowsAreIndependent) {
  const KeyedDropout keys(5, 3, {"first", "second"});
  const double p = 0.1;
  const torch::Tensor mask =
      keys.mask(0x200, p, 400, 256, std::vector<int64_t>{400, 400}, torch::kFloat32);
  const torch::Tensor kept = (mask > 0).to(torch::kFloat64);
  const double share = kept.mean().item<double>();
  EXPECT_NEAR(share, 1 - p, 0.005);  // 204,800 draws: the standard error is 0.0007
  // Both rows kept where independent rows would be: (1 - p)^2.
  const double both = (kept[0] * kept[1]).mean().item<double>();
  EXPECT_NEAR(both, (1 - p) * (1 - p), 0.006);
  // Neighbouring channels and steps are not correlated either.
  const torch::Tensor row = kept[0];
  EXPECT_NEAR((row.narrow(1, 0, 255) * row.narrow(1, 1, 255)).mean().item<double>(),
              (1 - p) * (1 - p), 0.006);
  EXPECT_NEAR((row.narrow(0, 0, 399) * row.narrow(0, 1, 399)).mean().item<double>(),
              (1 - p) * (1 - p), 0.006);
  EXPECT_FLOAT_EQ(mask.max().item<float>(), static_cast<float>(1 / (1 - p)));
}

}  // namespace
}  // namespace tts::models
