#include "tts/data/length_buckets.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>
#include <sstream>

#include "tts/core/error.h"
#include "tts/core/frames.h"

namespace tts::data {

std::optional<int> LengthBuckets::bucket_of(int64_t text_length, int64_t frame_count) const {
  for (int i = 0; i < size(); ++i) {
    if (text_length <= text[i] && frame_count <= frames[i]) return i;
  }
  return std::nullopt;
}

std::string LengthBuckets::describe() const {
  std::string out = fmt::format("{} bucket(s) (text, frames):", size());
  for (int i = 0; i < size(); ++i) out += fmt::format(" ({}, {})", text[i], frames[i]);
  return out;
}

std::string LengthBuckets::format() const {
  std::string out = fmt::format("frame_multiple {}\n", frame_multiple);
  for (int i = 0; i < size(); ++i) out += fmt::format("{} {}\n", text[i], frames[i]);
  return out;
}

LengthBuckets LengthBuckets::parse(const std::string& text, const std::string& where) {
  auto fail = [&](const std::string& why) {
    return Error(fmt::format(
        "{}: not a length-bucket ladder ({}); delete it to have the run record the ladder its "
        "store gives again",
        where, why));
  };
  std::istringstream in(text);
  std::string word;
  LengthBuckets ladder;
  if (!(in >> word) || word != "frame_multiple" || !(in >> ladder.frame_multiple) ||
      ladder.frame_multiple < 1 || ladder.frame_multiple > 1'000'000) {
    throw fail("expected a first line 'frame_multiple R'");
  }
  int64_t t = 0;
  int64_t f = 0;
  while (in >> t) {
    if (!(in >> f)) throw fail("a row without its frame count");
    if (ladder.size() >= kMaxLengthBuckets) {
      throw fail(fmt::format("more than {} buckets", kMaxLengthBuckets));
    }
    if (t < 1 || f < 1 || f % ladder.frame_multiple != 0 ||
        (!ladder.empty() && (t < ladder.text.back() || f <= ladder.frames.back()))) {
      throw fail(fmt::format("row ({}, {}) is not an ascending bucket", t, f));
    }
    ladder.text.push_back(t);
    ladder.frames.push_back(f);
  }
  if (!in.eof()) throw fail("a row that is not two whole numbers");
  if (ladder.empty()) throw fail("no buckets");
  return ladder;
}

LengthBuckets make_length_buckets(const std::vector<int64_t>& text_lengths,
                                  const std::vector<int64_t>& frame_counts, int count,
                                  int64_t frame_multiple) {
  TTS_CHECK(count >= 1 && count <= kMaxLengthBuckets,
            "length buckets: train.length_buckets must be in [1, {}], found {}", kMaxLengthBuckets,
            count);
  TTS_CHECK(frame_multiple >= 1, "length buckets: a frame multiple must be >= 1, found {}",
            frame_multiple);
  TTS_CHECK(!frame_counts.empty() && text_lengths.size() == frame_counts.size(),
            "length buckets: {} text lengths for {} frame counts (neither may be 0)",
            text_lengths.size(), frame_counts.size());
  const size_t n = frame_counts.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return frame_counts[a] < frame_counts[b]; });
  for (size_t i = 0; i < n; ++i) {
    TTS_CHECK(frame_counts[i] > 0 && text_lengths[i] > 0,
              "length buckets: utterance {} has {} symbols and {} frames; both must be > 0", i,
              text_lengths[i], frame_counts[i]);
  }
  LengthBuckets ladder;
  ladder.frame_multiple = frame_multiple;
  size_t next = 0;      // the first utterance (in frame order) not yet under a boundary
  int64_t longest = 0;  // the longest text so far
  for (int i = 1; i <= count; ++i) {
    // The utterance at the i/N quantile: the last one the bucket must hold.
    const size_t last = std::max<size_t>((n * static_cast<size_t>(i) + count - 1) / count, 1) - 1;
    const int64_t boundary = padded_frames(frame_counts[order[last]], frame_multiple);
    if (!ladder.empty() && boundary <= ladder.frames.back())
      continue;  // merged with the one before
    while (next < n && frame_counts[order[next]] <= boundary) {
      longest = std::max(longest, text_lengths[order[next]]);
      ++next;
    }
    ladder.frames.push_back(boundary);
    ladder.text.push_back(longest);
  }
  // The longest text of the set lies under the last frame boundary, which holds every utterance.
  ladder.text.back() = *std::max_element(text_lengths.begin(), text_lengths.end());
  return ladder;
}

}  // namespace tts::data
