#include "tts/data/sampler.h"

#include <algorithm>
#include <numeric>

#include "tts/core/error.h"
#include "tts/core/frames.h"

namespace tts::data {
namespace {

// SplitMix64: a small generator whose output is the same on every platform and standard library,
// so every rank (whatever machine it runs on) computes the same plan.
class Rng {
 public:
  Rng(int64_t seed, int64_t epoch, uint64_t stream) {
    state_ = static_cast<uint64_t>(seed) * 0x9E3779B97F4A7C15ULL ^
             (static_cast<uint64_t>(epoch) + 0x632BE59BD9B4E019ULL) * 0xD1B54A32D192ED03ULL ^
             stream * 0x8CB92BA72F3D8DD7ULL;
    next();
  }
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n).
  uint64_t below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }
  template <class T>
  void shuffle(std::vector<T>& items) {
    for (size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[below(i)]);
  }

 private:
  uint64_t state_;
};

enum Stream : uint64_t { kUtterances = 1, kBatchOrder = 2, kRandomSharding = 3 };

}  // namespace

namespace {

// measure_plan with `pad(batch, longest frames, longest text)` -> the batch's padded (frames,
// text length).
template <class Pad>
BatchStats measure_padded(const EpochPlan& plan, const std::vector<int64_t>& lengths,
                          const std::vector<int64_t>* text_lengths, Pad pad) {
  BatchStats stats;
  double padded_total = 0, real_total = 0, slowest_total = 0, mean_total = 0;
  double text_padded = 0, text_real = 0;
  for (const auto& step : plan) {
    double slowest = 0, sum = 0;
    for (const auto& batch : step) {
      int64_t longest = 0, real = 0, longest_text = 0;
      for (int64_t index : batch) {
        longest = std::max(longest, lengths[index]);
        real += lengths[index];
        if (text_lengths) {
          longest_text = std::max(longest_text, (*text_lengths)[index]);
          text_real += static_cast<double>((*text_lengths)[index]);
        }
      }
      const auto [frames, text] = pad(longest, longest_text);
      double padded = static_cast<double>(batch.size()) * static_cast<double>(frames);
      text_padded += static_cast<double>(batch.size()) * static_cast<double>(text);
      padded_total += padded;
      real_total += static_cast<double>(real);
      slowest = std::max(slowest, padded);
      sum += padded;
    }
    double mean = step.empty() ? 0 : sum / static_cast<double>(step.size());
    slowest_total += slowest;
    mean_total += mean;
    if (mean > 0) stats.worst_step_imbalance = std::max(stats.worst_step_imbalance, slowest / mean);
  }
  stats.padding_fraction = padded_total > 0 ? (padded_total - real_total) / padded_total : 0;
  stats.rank_imbalance = mean_total > 0 ? slowest_total / mean_total : 1;
  stats.text_padding_fraction = text_padded > 0 ? (text_padded - text_real) / text_padded : 0;
  return stats;
}

}  // namespace

BatchStats measure_plan(const EpochPlan& plan, const std::vector<int64_t>& lengths, int r) {
  return measure_padded(plan, lengths, nullptr, [r](int64_t longest, int64_t longest_text) {
    return std::pair<int64_t, int64_t>(padded_frames(longest, r), longest_text);
  });
}

BatchStats measure_plan(const EpochPlan& plan, const std::vector<int64_t>& lengths, int r,
                        const std::vector<int64_t>& text_lengths, const LengthBuckets& buckets) {
  TTS_CHECK(text_lengths.size() == lengths.size(),
            "measure_plan: {} text lengths for {} utterances", text_lengths.size(), lengths.size());
  return measure_padded(plan, lengths, &text_lengths, [&](int64_t longest, int64_t longest_text) {
    const int64_t frames = padded_frames(longest, r);
    if (buckets.empty()) return std::pair<int64_t, int64_t>(frames, longest_text);
    const std::optional<int> bucket = buckets.bucket_of(longest_text, frames);
    TTS_CHECK(bucket.has_value(),
              "measure_plan: a batch of {} symbols and {} frames is longer than every "
              "length bucket ({})",
              longest_text, frames, buckets.describe());
    return std::pair<int64_t, int64_t>(buckets.frames[*bucket], buckets.text[*bucket]);
  });
}

BalancedSampler::BalancedSampler(std::vector<int64_t> lengths, int batch_size, int world_size,
                                 int64_t seed, int pool_batches)
    : lengths_(std::move(lengths)),
      batch_size_(batch_size),
      world_size_(world_size),
      seed_(seed),
      pool_batches_(pool_batches) {
  TTS_USAGE_CHECK(batch_size_ >= 1, "sampler: train.batch_size must be >= 1, found {}",
                  batch_size_);
  TTS_USAGE_CHECK(world_size_ >= 1, "sampler: the world size must be >= 1, found {}", world_size_);
  TTS_USAGE_CHECK(pool_batches_ >= 1, "sampler: data.sort_pool_batches must be >= 1, found {}",
                  pool_batches_);
  const int64_t n = size();
  TTS_USAGE_CHECK(n >= world_size_,
                  "sampler: {} utterances cannot give each of {} ranks one per step; use fewer "
                  "ranks or more data",
                  n, world_size_);
  for (int64_t length : lengths_) {
    TTS_USAGE_CHECK(length > 0, "sampler: utterance lengths must be > 0, found {}", length);
  }
  const int64_t global = static_cast<int64_t>(batch_size_) * world_size_;
  int64_t steps = std::min((n + global - 1) / global, n / world_size_);
  global_sizes_.assign(steps, n / steps);
  for (int64_t s = 0; s < n % steps; ++s) ++global_sizes_[s];
}

EpochPlan BalancedSampler::plan(int64_t epoch) const {
  const int64_t steps = batches_per_epoch();
  std::vector<int64_t> order(lengths_.size());
  std::iota(order.begin(), order.end(), 0);
  Rng(seed_, epoch, kUtterances).shuffle(order);

  // Pools of pool_batches_ global batches, each sorted by length (longest first), cut into global
  // batches of consecutive lengths.
  std::vector<std::vector<int64_t>> global_batches;
  global_batches.reserve(steps);
  auto cursor = order.begin();
  for (int64_t first = 0; first < steps; first += pool_batches_) {
    int64_t last = std::min<int64_t>(steps, first + pool_batches_);
    int64_t pool_size =
        std::accumulate(global_sizes_.begin() + first, global_sizes_.begin() + last, int64_t{0});
    auto pool_end = cursor + pool_size;
    std::stable_sort(cursor, pool_end,
                     [this](int64_t a, int64_t b) { return lengths_[a] > lengths_[b]; });
    for (int64_t s = first; s < last; ++s) {
      global_batches.emplace_back(cursor, cursor + global_sizes_[s]);
      cursor += global_sizes_[s];
    }
  }
  Rng(seed_, epoch, kBatchOrder).shuffle(global_batches);

  EpochPlan plan(steps, std::vector<std::vector<int64_t>>(world_size_));
  std::vector<int64_t> capacity(world_size_), frames(world_size_);
  for (int64_t s = 0; s < steps; ++s) {
    const auto& batch = global_batches[s];  // longest first
    const int64_t g = static_cast<int64_t>(batch.size());
    // Every rank takes g / W utterances; the g mod W extra ones rotate over the ranks by step.
    for (int k = 0; k < world_size_; ++k) {
      int64_t rotated = (k - s % world_size_ + world_size_) % world_size_;
      capacity[k] = g / world_size_ + (rotated < g % world_size_ ? 1 : 0);
      frames[k] = 0;
    }
    for (int64_t index : batch) {
      int best = -1;
      for (int k = 0; k < world_size_; ++k) {
        if (capacity[k] == 0) continue;
        if (best < 0 || frames[k] < frames[best] ||
            (frames[k] == frames[best] && capacity[k] < capacity[best])) {
          best = k;
        }
      }
      plan[s][best].push_back(index);
      frames[best] += lengths_[index];
      --capacity[best];
    }
  }
  return plan;
}

std::vector<std::vector<int64_t>> BalancedSampler::rank_batches(int64_t epoch, int rank) const {
  TTS_CHECK(rank >= 0 && rank < world_size_, "sampler: rank {} is outside [0, {})", rank,
            world_size_);
  EpochPlan all = plan(epoch);
  std::vector<std::vector<int64_t>> mine;
  mine.reserve(all.size());
  for (auto& step : all) mine.push_back(std::move(step[rank]));
  return mine;
}

BalancedSampler::Report BalancedSampler::report(int64_t epoch, int r) const {
  BatchStats stats = measure_plan(plan(epoch), lengths_, r);
  return {stats.padding_fraction, stats.rank_imbalance};
}

EpochPlan random_sharding_plan(int64_t n, int batch_size, int world_size, int64_t seed,
                               int64_t epoch) {
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  Rng(seed, epoch, kRandomSharding).shuffle(order);
  const int64_t per_rank = n / world_size;
  const int64_t steps = (per_rank + batch_size - 1) / batch_size;
  EpochPlan plan(steps, std::vector<std::vector<int64_t>>(world_size));
  for (int64_t i = 0; i < per_rank * world_size; ++i) {
    int64_t rank = i % world_size;
    int64_t position = i / world_size;
    plan[position / batch_size][rank].push_back(order[i]);
  }
  return plan;
}

}  // namespace tts::data
