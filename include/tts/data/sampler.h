// Length-balanced, rank-sharded batch sampler. Tacotron's decoder runs to the longest utterance of
// a batch and the slowest rank sets the step time, so each epoch:
//   1. shuffle all utterances with a generator seeded by (seed, epoch);
//   2. cut the shuffled list into pools of `pool_batches` global batches and sort each pool by
//      length, so a global batch holds similar lengths;
//   3. cut each pool into global batches of batch_size x world_size utterances;
//   4. shuffle the order of the global batches;
//   5. deal each global batch to the ranks: longest first, each utterance to the rank with the
//      fewest decoder frames so far among those still short of their count, so every rank gets
//      the same number of utterances (± 1) and one of the world_size longest (a rank holding one
//      utterance more gets one of the shorter of those).
// The plan depends only on (lengths, batch_size, world_size, seed, pool_batches, epoch): every rank
// computes the same one and takes its own share. Every utterance is used exactly once per epoch.
// Remainder: the epoch has S = ceil(N / (batch_size x world_size)) steps (fewer when N is too small
// to give every rank an utterance at every step) and the N utterances are spread over the S global
// batches as evenly as possible, so rank batches hold batch_size or slightly fewer utterances, and
// every rank takes exactly S steps.
#pragma once

#include <cstdint>
#include <vector>

#include "tts/data/length_buckets.h"

namespace tts::data {

// Global batches of one epoch: steps[s][rank] = utterance indices of that rank's batch at step s.
using EpochPlan = std::vector<std::vector<std::vector<int64_t>>>;

// Padding and balance of a plan, for utterance lengths `lengths` (decoder frames) and r frames per
// decoder step. A rank batch costs B x T, T its longest length rounded up to a multiple of r.
struct BatchStats {
  // padded frames that are padding ÷ all padded frames, over the whole epoch.
  double padding_fraction = 0;
  // Σ_steps max over ranks of padded frames ÷ Σ_steps mean over ranks: the time the slowest rank
  // sets relative to a perfectly balanced split (1.0 = balanced).
  double rank_imbalance = 0;
  // The same ratio at the worst single step.
  double worst_step_imbalance = 0;
  // Padded text positions that are padding ÷ all padded text positions (measured with text
  // lengths only; else 0).
  double text_padding_fraction = 0;
};
BatchStats measure_plan(const EpochPlan& plan, const std::vector<int64_t>& lengths, int r);
// The same with each rank batch padded up to its length bucket (train.length_buckets), for
// utterances of `text_lengths` symbols: the padding the buckets cost over the batches' own.
// Throws tts::Error when a batch fits no bucket.
BatchStats measure_plan(const EpochPlan& plan, const std::vector<int64_t>& lengths, int r,
                        const std::vector<int64_t>& text_lengths, const LengthBuckets& buckets);

class BalancedSampler {
 public:
  // `lengths`: decoder frames of each utterance (index = utterance index). Throws UsageError when
  // there are fewer utterances than ranks or an argument is out of range.
  BalancedSampler(std::vector<int64_t> lengths, int batch_size, int world_size, int64_t seed,
                  int pool_batches);

  // The batches (utterance indices) of `rank` in `epoch`, in training order.
  std::vector<std::vector<int64_t>> rank_batches(int64_t epoch, int rank) const;
  // Every rank's batches of `epoch`: plan[step][rank].
  EpochPlan plan(int64_t epoch) const;
  // Steps per epoch; the same on every rank.
  int64_t batches_per_epoch() const { return static_cast<int64_t>(global_sizes_.size()); }
  int world_size() const { return world_size_; }
  int64_t size() const { return static_cast<int64_t>(lengths_.size()); }

  struct Report {
    double padding_fraction;  // see BatchStats
    double rank_imbalance;
  };
  Report report(int64_t epoch, int r /* n_frames_per_step */) const;

 private:
  std::vector<int64_t> lengths_;
  int batch_size_;
  int world_size_;
  int64_t seed_;
  int pool_batches_;
  std::vector<int64_t> global_sizes_;  // utterances in each global batch of an epoch
};

// Plain random sharding for comparison (torch's DistributedSampler + batching): shuffle by
// (seed, epoch), drop the last N mod world_size, deal utterance i to rank i mod world_size, cut
// each rank's list into batches of batch_size (the last one smaller).
EpochPlan random_sharding_plan(int64_t n, int batch_size, int world_size, int64_t seed,
                               int64_t epoch);

}  // namespace tts::data
