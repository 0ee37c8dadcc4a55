// Balance and padding of BalancedSampler against plain random sharding (DistributedSampler-style),
// on LJSpeech's length distribution: character counts of the training transcripts turned into
// decoder frames at about 15 characters a second and 86 frames a second (22050 Hz, hop 256).
// Then the extra padding that length buckets (train.length_buckets) cost the balanced plan.
//
//   bench_sampler TRANSCRIPTS [EPOCHS]
//   TRANSCRIPTS: LJSpeech-1.1's metadata.csv (ID|raw text|normalized text) or a file of ID|text
//   lines; the last field of a line is its text. EPOCHS: epochs averaged (default 5).
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "tts/core/timer.h"
#include "tts/data/sampler.h"

namespace {

// Characters of each transcript (the text lengths the buckets see).
std::vector<int64_t> ljspeech_characters(const std::string& path) {
  std::ifstream in(path);
  std::vector<int64_t> characters;
  std::string line;
  while (std::getline(in, line)) {
    auto bar = line.rfind('|');
    if (bar == std::string::npos) continue;
    characters.push_back(std::max<int64_t>(1, static_cast<int64_t>(line.size() - bar - 1)));
  }
  return characters;
}

std::vector<int64_t> ljspeech_frames(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::vector<int64_t> frames;
  std::string line;
  while (std::getline(in, line)) {
    auto bar = line.rfind('|');  // the text is the last field: ID|text or ID|raw|normalized
    if (bar == std::string::npos) continue;
    double characters = static_cast<double>(line.size() - bar - 1);
    frames.push_back(std::max<int64_t>(1, static_cast<int64_t>(characters / 15.0 * 86.0 + 0.5)));
  }
  return frames;
}

struct Averages {
  double padding = 0, imbalance = 0, worst = 0, slowest_frames = 0;
};

template <class PlanFn>
Averages average(PlanFn plan_of, const std::vector<int64_t>& lengths, int r, int epochs) {
  Averages a;
  for (int epoch = 0; epoch < epochs; ++epoch) {
    tts::data::EpochPlan plan = plan_of(epoch);
    auto stats = tts::data::measure_plan(plan, lengths, r);
    a.padding += stats.padding_fraction / epochs;
    a.imbalance += stats.rank_imbalance / epochs;
    a.worst = std::max(a.worst, stats.worst_step_imbalance);
    // Decoder frames the slowest rank processes per epoch: what sets the epoch's time.
    double slowest = 0;
    for (const auto& step : plan) {
      double most = 0;
      for (const auto& batch : step) {
        int64_t longest = 0;
        for (int64_t i : batch) longest = std::max(longest, lengths[i]);
        most = std::max(most, static_cast<double>(batch.size()) * ((longest + r - 1) / r * r));
      }
      slowest += most;
    }
    a.slowest_frames += slowest / epochs;
  }
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr,
               "usage: bench_sampler TRANSCRIPTS [EPOCHS]\n"
               "  TRANSCRIPTS: LJSpeech-1.1's metadata.csv, or a file of ID|text lines "
               "(tests/data/ljspeech_sample_transcripts.txt holds 300 of them)\n");
    return 2;
  }
  std::string path = argv[1];
  int epochs = argc > 2 ? std::stoi(argv[2]) : 5;
  std::vector<int64_t> lengths = ljspeech_frames(path);
  if (lengths.empty()) {
    fmt::print(stderr, "bench_sampler: no ID|text lines in {}\n", path);
    return 2;
  }
  int64_t total = 0, longest = 0;
  for (int64_t l : lengths) {
    total += l;
    longest = std::max(longest, l);
  }
  fmt::print("{} utterances, {:.0f} frames mean, {} longest; batch 32 per rank; {} epochs\n",
             lengths.size(), static_cast<double>(total) / lengths.size(), longest, epochs);
  fmt::print("{:>5} {:>2} {:>5} | {:>9} {:>9} {:>9} | {:>9} {:>9} {:>9} | {:>8} {:>8}\n", "ranks",
             "r", "pool", "pad bal", "imb bal", "worst bal", "pad rand", "imb rand", "worst rnd",
             "speedup", "plan ms");
  const int batch_size = 32;
  const int64_t seed = 1234;
  for (int world : {1, 2, 4, 8}) {
    for (int r : {1, 3}) {
      for (int pool : {4, 32}) {
        tts::data::BalancedSampler sampler(lengths, batch_size, world, seed, pool);
        tts::Stopwatch watch;
        Averages balanced = average([&](int e) { return sampler.plan(e); }, lengths, r, epochs);
        double plan_ms = watch.seconds() * 1000 / epochs;
        Averages random = average(
            [&](int e) {
              return tts::data::random_sharding_plan(static_cast<int64_t>(lengths.size()),
                                                     batch_size, world, seed, e);
            },
            lengths, r, epochs);
        fmt::print(
            "{:>5} {:>2} {:>5} | {:>8.2f}% {:>9.4f} {:>9.4f} | {:>8.2f}% {:>9.4f} {:>9.4f} | "
            "{:>7.2f}x {:>8.1f}\n",
            world, r, pool, 100 * balanced.padding, balanced.imbalance, balanced.worst,
            100 * random.padding, random.imbalance, random.worst,
            random.slowest_frames / balanced.slowest_frames, plan_ms);
      }
    }
  }
  fmt::print(
      "pad: padded frames that are padding / all padded frames; imb: sum over steps of the "
      "slowest rank's padded frames / sum of the mean rank's; worst: the worst single step; "
      "speedup: decoder frames the slowest rank runs per epoch, random / balanced\n");

  // Length buckets: each rank batch of the balanced plan (pool 32) padded up to its bucket.
  const std::vector<int64_t> characters = ljspeech_characters(path);
  fmt::print("\nlength buckets (balanced plan, pool 32, batch 32 per rank)\n");
  fmt::print("{:>5} {:>2} {:>7} | {:>9} {:>9} | {:>9} {:>9}\n", "ranks", "r", "buckets", "pad",
             "pad text", "extra", "extra txt");
  for (int world : {1, 2, 8}) {
    for (int r : {1, 3}) {
      tts::data::BalancedSampler sampler(lengths, batch_size, world, seed, 32);
      double plain = 0, plain_text = 0;
      for (int buckets : {0, 4, 8, 16, 32}) {
        const tts::data::LengthBuckets ladder =
            buckets == 0 ? tts::data::LengthBuckets{}
                         : tts::data::make_length_buckets(characters, lengths, buckets, r);
        double pad = 0, pad_text = 0;
        for (int e = 0; e < epochs; ++e) {
          auto stats = tts::data::measure_plan(sampler.plan(e), lengths, r, characters, ladder);
          pad += stats.padding_fraction / epochs;
          pad_text += stats.text_padding_fraction / epochs;
        }
        if (buckets == 0) {
          plain = pad;
          plain_text = pad_text;
        }
        // extra: padded frames with buckets / without, minus 1 (the compute the buckets add).
        fmt::print("{:>5} {:>2} {:>7} | {:>8.2f}% {:>8.2f}% | {:>8.2f}% {:>8.2f}%\n", world, r,
                   buckets == 0 ? std::string("off") : std::to_string(ladder.size()), 100 * pad,
                   100 * pad_text, 100 * ((1 - plain) / (1 - pad) - 1),
                   100 * ((1 - plain_text) / (1 - pad_text) - 1));
      }
    }
  }
  fmt::print(
      "pad text: padded text positions that are padding; extra: padded frames (text positions) "
      "with the buckets / without, minus 1\n");
  return 0;
}
