#include "tts/models/frame_windows.h"

#include <fmt/format.h>

#include <algorithm>

#include "tts/core/error.h"

namespace tts::models {

int64_t ChunkPlan::size(int64_t index) const {
  if (is_whole()) return 0;
  int64_t frames = first;
  for (int64_t i = 0; i < index && frames < most; ++i) frames *= 2;
  return std::max(first, std::min(frames, std::max(most, first)));
}

std::string ChunkPlan::describe() const {
  if (is_whole()) return "the whole sequence";
  if (most <= first) return fmt::format("{} frames", first);
  return fmt::format("{} frames, doubling to {}", first, most);
}

ChunkPlan parse_chunk_plan(const std::string& text, const std::string& what) {
  if (text == "whole") return ChunkPlan::whole();
  constexpr int64_t kMost = 4096;
  auto number = [&](const std::string& part) -> int64_t {
    const bool digits =
        !part.empty() && part.size() <= 4 &&
        std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    const int64_t value = digits ? std::stoll(part) : 0;
    TTS_USAGE_CHECK(
        value >= 1 && value <= kMost,
        "{}: expected FIRST[:MOST] frames per chunk, each in [1, {}], or 'whole'; found "
        "'{}'",
        what, kMost, text);
    return value;
  };
  const size_t colon = text.find(':');
  ChunkPlan plan;
  plan.first = number(text.substr(0, colon));
  plan.most = colon == std::string::npos ? plan.first : number(text.substr(colon + 1));
  TTS_USAGE_CHECK(plan.most >= plan.first,
                  "{}: the largest chunk ({}) is smaller than the first ({}); give FIRST:MOST with "
                  "MOST >= FIRST",
                  what, plan.most, plan.first);
  return plan;
}

void ReceptiveField::convolution(int64_t kernel, int64_t dilation, int64_t padding) {
  const int64_t span = (kernel - 1) * dilation;
  Layer layer;
  layer.kind = Layer::kConvolution;
  layer.before = padding < 0 ? span / 2 : padding;
  layer.after = span - layer.before;
  layers_.push_back(layer);
}

void ReceptiveField::transposed(int64_t kernel, int64_t stride, int64_t padding) {
  Layer layer;
  layer.kind = Layer::kTransposed;
  layer.kernel = kernel;
  layer.stride = stride;
  layer.before = padding;
  layers_.push_back(layer);
  scale_ *= stride;
}

void ReceptiveField::stretch(int64_t scale) {
  Layer layer;
  layer.kind = Layer::kStretch;
  layer.stride = scale;
  layers_.push_back(layer);
  scale_ *= scale;
}

ReceptiveField ReceptiveField::branch() const {
  ReceptiveField field;
  field.scale_ = scale_;
  return field;
}

void ReceptiveField::widest_of(const ReceptiveField& a, const ReceptiveField& b) {
  TTS_CHECK(a.scale_ == scale_ && b.scale_ == scale_ && a.layers_.size() + b.layers_.size() > 0,
            "ReceptiveField: branches must keep the resolution they start at");
  Layer layer;
  layer.kind = Layer::kBranches;
  layer.branches = {a, b};
  layers_.push_back(layer);
}

namespace {
int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }
}  // namespace

void ReceptiveField::walk_back(int64_t& lo, int64_t& hi) const {
  for (auto layer = layers_.rbegin(); layer != layers_.rend(); ++layer) {
    switch (layer->kind) {
      case Layer::kConvolution:  // output n reads n - before .. n + after
        lo -= layer->before;
        hi += layer->after;
        break;
      case Layer::kTransposed: {
        // Fine column m = c * stride + j (j in [0, stride)) reads the coarse columns
        // ceil((m + padding - kernel + 1) / stride) .. floor((m + padding) / stride).
        const int64_t u = layer->stride;
        lo = ceil_div(lo + layer->before - layer->kernel + 1, u);
        hi = floor_div(u - 1 + hi + layer->before, u);
        break;
      }
      case Layer::kStretch:  // fine column m reads coarse column floor(m / scale)
        lo = floor_div(lo, layer->stride);
        hi = floor_div(layer->stride - 1 + hi, layer->stride);
        break;
      case Layer::kBranches: {
        int64_t widest_lo = lo, widest_hi = hi;
        for (const ReceptiveField& branch : layer->branches) {
          int64_t l = lo, h = hi;
          branch.walk_back(l, h);
          widest_lo = std::min(widest_lo, l);
          widest_hi = std::max(widest_hi, h);
        }
        lo = widest_lo;
        hi = widest_hi;
        break;
      }
    }
  }
}

int64_t ReceptiveField::left() const {
  int64_t lo = 0, hi = 0;
  walk_back(lo, hi);
  return -lo;
}

int64_t ReceptiveField::right() const {
  int64_t lo = 0, hi = 0;
  walk_back(lo, hi);
  return hi;
}

std::optional<FrameWindow> FrameWindows::next(int64_t received, bool complete, int64_t outputs) {
  const int64_t total = complete && outputs >= 0 ? std::min(outputs, received) : received;
  if (done_ >= total) return std::nullopt;
  FrameWindow window;
  window.begin = done_;
  const int64_t want = plan_.size(chunks_);
  if (want == 0) {  // the whole sequence, once complete
    if (!complete) return std::nullopt;
    window.end = total;
  } else if (complete) {
    window.end = std::min(total, done_ + want);
  } else {
    window.end = done_ + want;
    if (window.end + right_ > received) return std::nullopt;
  }
  window.input_begin = std::max<int64_t>(0, window.begin - left_);
  window.input_end = std::min(received, window.end + right_);
  done_ = window.end;
  ++chunks_;
  return window;
}

}  // namespace tts::models
