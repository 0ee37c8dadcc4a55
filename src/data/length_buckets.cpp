#include "tts/data/length_buckets.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <numeric>
#include <string_view>

#include "tts/core/error.h"
#include "tts/core/frames.h"
#include "tts/core/fs.h"

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

namespace {

// A whole number in [1, kMaxLengthBucketValue] written as format() writes it (digits only).
std::optional<int64_t> parse_value(std::string_view word) {
  int64_t value = 0;
  const char* end = word.data() + word.size();
  if (word.empty() || word.size() > 10 || word.front() < '0' || word.front() > '9') {
    return std::nullopt;
  }
  const auto [ptr, ec] = std::from_chars(word.data(), end, value);
  if (ec != std::errc() || ptr != end || value < 1 || value > kMaxLengthBucketValue) {
    return std::nullopt;
  }
  return value;
}

// The words of `line` between single spaces ("a b" -> {"a", "b"}; "a  b" has an empty one).
std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  size_t begin = 0;
  while (words.size() <= 2) {
    const size_t space = line.find(' ', begin);
    words.push_back(line.substr(begin, space == std::string_view::npos ? space : space - begin));
    if (space == std::string_view::npos) break;
    begin = space + 1;
  }
  return words;
}

}  // namespace

LengthBuckets LengthBuckets::parse(const std::string& text, const std::string& where) {
  int line_number = 0;
  auto fail = [&](const std::string& why) {
    return Error(fmt::format(
        "{}:{}: not a length-bucket ladder ({}); delete the file to have the run record the "
        "ladder its store gives again",
        where, line_number, why));
  };
  LengthBuckets ladder;
  size_t begin = 0;
  while (begin < text.size()) {
    const size_t newline = text.find('\n', begin);
    const std::string_view line = std::string_view(text).substr(
        begin, newline == std::string::npos ? std::string::npos : newline - begin);
    begin = newline == std::string::npos ? text.size() : newline + 1;
    ++line_number;
    const std::vector<std::string_view> words = split_words(line);
    if (line_number == 1) {
      const std::optional<int64_t> multiple =
          words.size() == 2 && words[0] == "frame_multiple" ? parse_value(words[1]) : std::nullopt;
      if (!multiple) {
        throw fail(
            fmt::format("expected 'frame_multiple R' with R in [1, {}]", kMaxLengthBucketValue));
      }
      ladder.frame_multiple = *multiple;
      continue;
    }
    if (ladder.size() >= config::kMaxLengthBuckets) {
      throw fail(fmt::format("more than {} buckets", config::kMaxLengthBuckets));
    }
    const std::optional<int64_t> t = words.size() == 2 ? parse_value(words[0]) : std::nullopt;
    const std::optional<int64_t> f = words.size() == 2 ? parse_value(words[1]) : std::nullopt;
    if (!t || !f) {
      throw fail(fmt::format("expected a row 'TEXT FRAMES' of two whole numbers in [1, {}]",
                             kMaxLengthBucketValue));
    }
    if (*f % ladder.frame_multiple != 0 ||
        (!ladder.empty() && (*t < ladder.text.back() || *f <= ladder.frames.back()))) {
      throw fail(fmt::format("row ({}, {}) is not an ascending bucket with frames a multiple of {}",
                             *t, *f, ladder.frame_multiple));
    }
    ladder.text.push_back(*t);
    ladder.frames.push_back(*f);
  }
  if (line_number == 0) {
    line_number = 1;
    throw fail("an empty file");
  }
  if (ladder.empty()) {
    ++line_number;
    throw fail("no buckets: expected a row 'TEXT FRAMES' after the first line");
  }
  return ladder;
}

LengthBuckets LengthBuckets::read(const std::string& path) {
  const FileDescriptor fd = open_regular_file_for_read(path);
  const int64_t size = file_size(fd, path);
  TTS_CHECK(size <= kMaxLengthBucketsFileBytes,
            "{}: {} bytes, more than a length-bucket ladder's {}; delete the file to have the run "
            "record the ladder its store gives again",
            path, size, kMaxLengthBucketsFileBytes);
  return parse(read_at(fd, path, 0, size), path);
}

LengthBuckets make_length_buckets(const std::vector<int64_t>& text_lengths,
                                  const std::vector<int64_t>& frame_counts, int count,
                                  int64_t frame_multiple) {
  TTS_CHECK(count >= 1 && count <= config::kMaxLengthBuckets,
            "length buckets: train.length_buckets must be in [1, {}], found {}",
            config::kMaxLengthBuckets, count);
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
