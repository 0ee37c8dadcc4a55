// Speaking a sequence of frames as it arrives: the chunks it is cut into (ChunkPlan), how far a
// stack of convolutions sees (ReceptiveField, derived from the layers' shapes), and which window
// of input frames makes the next chunk of output final (FrameWindows). A network that sees r
// frames on each side gives, on a window with r frames of context past each side of a chunk (or
// the sequence's own edge there), what it gives on the whole sequence for that chunk, up to
// rounding: the Tacotron-2 postnet, HiFi-GAN's generator and WaveNet's upsampling stream so.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tts::models {

// Frames per chunk: the first `first`, then each chunk twice the one before up to `most` (a small
// first chunk is heard soon; larger later ones cost less context recomputed per frame). `first`
// 0: one chunk, the whole sequence, once it is complete.
struct ChunkPlan {
  int64_t first = 0;
  int64_t most = 0;

  static ChunkPlan whole() { return {}; }
  // The shipped streaming default: 8 frames first (93 ms at 22.05 kHz and hop 256), then 16, 32,
  // 64, 64, ...
  static ChunkPlan streaming() { return {8, 64}; }
  bool is_whole() const { return first <= 0; }
  // Frames of chunk `index` (0-based); 0 for a whole plan.
  int64_t size(int64_t index) const;
  // "8 frames, doubling to 64" or "the whole sequence", for messages.
  std::string describe() const;
};

// Parses "FIRST[:MOST]" (synthesize --chunk 8:64; MOST defaults to FIRST) or "whole". Throws
// UsageError naming `what` for anything else, or a size outside [1, 4096].
ChunkPlan parse_chunk_plan(const std::string& text, const std::string& what);

// How many input frames an output frame sees on each side, for a stack of layers walked from input
// to output. Convolutions keep the length (same padding); upsampling layers multiply the
// resolution. The reach is exact: walked back from an output column through every layer, in
// whole columns of each resolution (an output sample belongs to the input frame it lies in).
class ReceptiveField {
 public:
  // A convolution of `kernel` taps spaced `dilation` apart, padded to keep the length; `padding`
  // < 0: (kernel - 1) * dilation / 2 on the left, the rest on the right.
  void convolution(int64_t kernel, int64_t dilation = 1, int64_t padding = -1);
  // A transposed convolution upsampling by `stride` (kernel `kernel`, padding `padding`).
  void transposed(int64_t kernel, int64_t stride, int64_t padding);
  // A repeat of every column `scale` times (nearest-neighbour upsampling).
  void stretch(int64_t scale);
  // Branches run side by side on the same input and summed (HiFi-GAN's residual blocks): the
  // widest branch's reach; each branch walked from this resolution (branch()).
  void widest_of(const ReceptiveField& a, const ReceptiveField& b);
  // An empty field at this one's resolution, for a branch.
  ReceptiveField branch() const;

  // Whole input frames seen on the left and on the right.
  int64_t left() const;
  int64_t right() const;
  // Output samples per input frame so far.
  int64_t scale() const { return scale_; }

 private:
  struct Layer {
    enum Kind { kConvolution, kTransposed, kStretch, kBranches };
    Kind kind = kConvolution;
    int64_t kernel = 1, stride = 1, before = 0, after = 0;
    std::vector<ReceptiveField> branches;
  };
  // Offsets [lo, hi] of the columns read, relative to the column an output lies in, carried back
  // through every layer to this field's input.
  void walk_back(int64_t& lo, int64_t& hi) const;

  int64_t scale_ = 1;
  std::vector<Layer> layers_;
};

// One window to compute: input frames [input_begin, input_end) give output frames [begin, end)
// final, at offset begin - input_begin in the window's output.
struct FrameWindow {
  int64_t begin = 0, end = 0;
  int64_t input_begin = 0, input_end = 0;
  int64_t offset() const { return begin - input_begin; }
  int64_t frames() const { return end - begin; }
};

// The windows that turn frames arriving over time into final output in chunks of `plan`, for a
// network that sees `left` and `right` frames on each side.
class FrameWindows {
 public:
  FrameWindows(int64_t left, int64_t right, ChunkPlan plan)
      : left_(left), right_(right), plan_(plan) {}
  // The next window once `received` frames are in (`complete`: all of them), or nullopt while the
  // next chunk needs frames still to come. Call until nullopt after every arrival. `outputs`: the
  // output frames in all once complete, when fewer than the input's (a Tacotron-2 decoder step
  // past its stop frame); -1: `received`.
  std::optional<FrameWindow> next(int64_t received, bool complete, int64_t outputs = -1);
  // Output frames made final so far.
  int64_t done() const { return done_; }

 private:
  int64_t left_, right_;
  ChunkPlan plan_;
  int64_t done_ = 0;
  int64_t chunks_ = 0;
};

}  // namespace tts::models
