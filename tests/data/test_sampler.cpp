// BalancedSampler: determinism and coverage for world sizes 1-8, equal steps on every rank, the
// remainder, balance and padding against plain random sharding, and the report's definitions.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "tts/core/error.h"
#include "tts/data/sampler.h"

namespace {

using tts::data::BalancedSampler;

// Deterministic, LJSpeech-like spread of decoder lengths (frames): 40..860.
std::vector<int64_t> spread_lengths(int n) {
  std::vector<int64_t> lengths;
  uint64_t state = 12345;
  for (int i = 0; i < n; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    double u1 = static_cast<double>((state >> 11) % 1000000) / 1e6;
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    double u2 = static_cast<double>((state >> 11) % 1000000) / 1e6;
    lengths.push_back(40 + static_cast<int64_t>(820 * (u1 + u2) / 2));  // triangular
  }
  return lengths;
}

TEST(BalancedSampler, DeterministicAndCoversEveryUtteranceOnceForWorldSizes1To8) {
  const int n = 1003;
  const int batch_size = 16;
  std::vector<int64_t> lengths = spread_lengths(n);
  for (int world = 1; world <= 8; ++world) {
    SCOPED_TRACE("world size " + std::to_string(world));
    BalancedSampler sampler(lengths, batch_size, world, 7, 4);
    BalancedSampler again(lengths, batch_size, world, 7, 4);
    const int64_t steps = sampler.batches_per_epoch();
    EXPECT_EQ(steps, (n + batch_size * world - 1) / (batch_size * world));
    for (int64_t epoch : {0, 1}) {
      std::vector<int> seen(n, 0);
      for (int rank = 0; rank < world; ++rank) {
        auto batches = sampler.rank_batches(epoch, rank);
        EXPECT_EQ(batches, again.rank_batches(epoch, rank));
        ASSERT_EQ(static_cast<int64_t>(batches.size()), steps);
        for (const auto& batch : batches) {
          EXPECT_GE(batch.size(), 1u);
          EXPECT_LE(batch.size(), static_cast<size_t>(batch_size));
          for (int64_t index : batch) ++seen[index];
        }
      }
      EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }));
    }
    EXPECT_NE(sampler.rank_batches(0, 0), sampler.rank_batches(1, 0));
    EXPECT_NE(sampler.rank_batches(0, 0),
              BalancedSampler(lengths, batch_size, world, 8, 4).rank_batches(0, 0));
  }
}

TEST(BalancedSampler, RanksTakeTheSameNumberOfUtterancesPerStepWithinOne) {
  std::vector<int64_t> lengths = spread_lengths(250);
  BalancedSampler sampler(lengths, 8, 6, 3, 2);  // 250 = 5 steps of 50 over 6 ranks
  auto plan = sampler.plan(0);
  ASSERT_EQ(plan.size(), 6u);
  for (const auto& step : plan) {
    size_t fewest = 1000, most = 0;
    for (const auto& batch : step) {
      fewest = std::min(fewest, batch.size());
      most = std::max(most, batch.size());
    }
    EXPECT_LE(most - fewest, 1u);
    EXPECT_LE(most, 8u);
  }
}

TEST(BalancedSampler, SmallDataStillGivesEveryRankABatchAtEveryStep) {
  // 10 utterances, 4 ranks, batch 1: 2 steps (not 3, which would leave ranks empty).
  BalancedSampler sampler(spread_lengths(10), 1, 4, 1, 1);
  EXPECT_EQ(sampler.batches_per_epoch(), 2);
  for (const auto& step : sampler.plan(0)) {
    for (const auto& batch : step) EXPECT_GE(batch.size(), 1u);
  }
  EXPECT_THROW(BalancedSampler(spread_lengths(3), 4, 4, 1, 1), tts::UsageError);
}

TEST(BalancedSampler, BalancesRanksAndPadsLessThanRandomSharding) {
  const int n = 12500, world = 8, batch_size = 32, r = 1;
  std::vector<int64_t> lengths = spread_lengths(n);
  BalancedSampler sampler(lengths, batch_size, world, 1234, 32);
  for (int64_t epoch = 0; epoch < 3; ++epoch) {
    auto report = sampler.report(epoch, r);
    EXPECT_LE(report.rank_imbalance, 1.02);
    EXPECT_GE(report.rank_imbalance, 1.0);
    EXPECT_LE(report.padding_fraction, 0.05);
    auto random = tts::data::measure_plan(
        tts::data::random_sharding_plan(n, batch_size, world, 1234, epoch), lengths, r);
    EXPECT_GT(random.rank_imbalance, report.rank_imbalance + 0.05);
    EXPECT_GT(random.padding_fraction, report.padding_fraction + 0.1);
  }
}

TEST(BalancedSampler, MeasurePlanFollowsItsDefinitions) {
  // Step 0: rank 0 {10, 7} -> 2 x 10 = 20 padded (3 padding); rank 1 {5} -> 1 x 6 = 6 (r = 2).
  // Step 1: rank 0 {4} -> 4; rank 1 {4} -> 4.
  std::vector<int64_t> lengths = {10, 7, 5, 4, 4};
  tts::data::EpochPlan plan = {{{0, 1}, {2}}, {{3}, {4}}};
  auto stats = tts::data::measure_plan(plan, lengths, 2);
  double padded = 20 + 6 + 4 + 4, real = 10 + 7 + 5 + 4 + 4;
  EXPECT_NEAR(stats.padding_fraction, (padded - real) / padded, 1e-12);
  EXPECT_NEAR(stats.rank_imbalance, (20.0 + 4.0) / (13.0 + 4.0), 1e-12);
  EXPECT_NEAR(stats.worst_step_imbalance, 20.0 / 13.0, 1e-12);
}

TEST(BalancedSampler, RandomShardingCoversEqualShares) {
  auto plan = tts::data::random_sharding_plan(103, 4, 3, 5, 0);
  std::set<int64_t> seen;
  for (const auto& step : plan) {
    for (const auto& batch : step) seen.insert(batch.begin(), batch.end());
  }
  EXPECT_EQ(seen.size(), 102u);  // 103 - 103 mod 3
  EXPECT_EQ(plan.size(), 9u);    // 34 per rank in batches of 4
}

}  // namespace
