// Length buckets (train.length_buckets): a ladder of (text length, mel frames) boundaries that
// training batches are padded up to, so that a run sees a handful of batch shapes instead of one
// per batch. A static shape is what a captured CUDA graph replays (train.cuda_graphs).
//
// The ladder of N buckets is made once, from the training set's lengths: bucket i's frame
// boundary is the (i+1)/N quantile of the utterances' mel frames, rounded up to a multiple of every
// r the run uses (model.n_frames_per_step, or each r of train.r_schedule); its text boundary is
// the longest text of an utterance with at most that many frames, and never below the bucket
// before's. The last bucket holds the longest frames and the longest text of the set, so every
// batch of the set fits one. A batch goes to the first bucket whose boundaries hold both its
// longest text and its longest frames.
//
// Padding does not change what a batch trains (Note [Exact global batch], models/tacotron2/
// forward.h: losses are normalized by the global real frame counts, attention and BatchNorm see
// only real positions); it costs the compute of the extra positions, which measure_plan reports.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tts/config/train_options.h"

namespace tts::data {

// Largest RUN/length_buckets.txt read: a ladder of config::kMaxLengthBuckets rows is far smaller.
inline constexpr int64_t kMaxLengthBucketsFileBytes = 64 * 1024;
// Largest frame multiple and boundary (text symbols or mel frames) a recorded ladder may hold: far
// past any utterance (config::kMaxUtteranceFrames), far below an overflow.
inline constexpr int64_t kMaxLengthBucketValue = 1'000'000'000;

struct LengthBuckets {
  // Ascending, the same size; frames[i] a multiple of `frame_multiple`.
  std::vector<int64_t> text;
  std::vector<int64_t> frames;
  int64_t frame_multiple = 1;

  bool empty() const { return frames.empty(); }
  int size() const { return static_cast<int>(frames.size()); }
  // The first bucket holding a batch whose longest text is `text_length` symbols and longest
  // utterance `frame_count` frames; nullopt when none does (the batch is longer than the set the
  // ladder was made from).
  std::optional<int> bucket_of(int64_t text_length, int64_t frame_count) const;
  // One line: "3 buckets (text, frames): (12, 96) (20, 160) (31, 248)".
  std::string describe() const;
  // The ladder as the run folder records it (RUN/length_buckets.txt), and back. parse() throws
  // tts::Error naming `where`, the line and the fix on anything but a ladder that format() writes
  // (bounded: config::kMaxLengthBuckets rows, values up to kMaxLengthBucketValue).
  std::string format() const;
  static LengthBuckets parse(const std::string& text, const std::string& where);
  // parse() of the file `path`: a regular file inside its folder (a symlink is refused, fs.h) of
  // at most kMaxLengthBucketsFileBytes.
  static LengthBuckets read(const std::string& path);
  bool operator==(const LengthBuckets& other) const {
    return text == other.text && frames == other.frames && frame_multiple == other.frame_multiple;
  }
  bool operator!=(const LengthBuckets& other) const { return !(*this == other); }
};

// The ladder of `count` buckets (1..config::kMaxLengthBuckets) for utterances of `text_lengths`
// symbols and `frame_counts` mel frames (the same size, not empty, every length > 0), frame
// boundaries multiples of `frame_multiple`. Quantiles that round to the same frame boundary merge,
// so the ladder may have fewer than `count` buckets.
LengthBuckets make_length_buckets(const std::vector<int64_t>& text_lengths,
                                  const std::vector<int64_t>& frame_counts, int count,
                                  int64_t frame_multiple);

}  // namespace tts::data
