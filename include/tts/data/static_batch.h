// Static batch buffers (train.cuda_graphs): a captured CUDA graph reads its inputs from the
// addresses it was captured with, so each batch shape gets one set of tensors, allocated once,
// and every batch of that shape is copied into them before the graph replays.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>

#include "tts/data/batch.h"

namespace tts::data {

// What fixes a batch's tensors' shapes.
struct BatchShape {
  int64_t utterances = 0;
  int64_t r = 0;       // frames per decoder step (Batch::r): the steps a graph replays
  int64_t text = 0;    // padded symbols
  int64_t frames = 0;  // padded mel frames
  int64_t n_mels = 0;
  int64_t n_linear = 0;  // 0: no linear targets
  bool speakers = false;
  bool operator==(const BatchShape& other) const;
  bool operator!=(const BatchShape& other) const { return !(*this == other); }
  // "B 4, r 2, text 31, frames 248, mels 80" (a key and a log line).
  std::string describe() const;
};
BatchShape shape_of(const Batch& batch);

// Zeroed tensors of `batch`'s shape and dtypes on `device`, and a [4] int64 `counts` tensor (see
// Batch::counts); its r, the other host fields empty. The buffers a batch of that shape is copied
// into.
Batch allocate_like(const Batch& batch, const torch::Device& device);

// Copies `source` into `target` (from allocate_like, of the same shape: else tts::Error naming
// both), keeping target's tensors (their storage, which a captured graph reads): every tensor
// by copy_, the host-side fields (ids, lengths, counts) assigned, and target.counts filled with
// the counts, for a step that must read them on the device.
void copy_batch_into(Batch& target, const Batch& source, bool non_blocking = false);

}  // namespace tts::data
