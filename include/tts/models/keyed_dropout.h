// Dropout whose masks belong to the utterance, not to the rank or the batch it lands in.
//
// Note [Dropout keyed by utterance]: W ranks x B utterances train as 1 rank x W*B only if each
// utterance is dropped out the same way wherever it is batched. libtorch's dropout draws from one
// stream per process, in batch order: a 2-rank run and a 1-rank run draw different masks for the
// same utterance. Here each utterance of a training step has its own key, made from the run's
// seed, the optimizer step and the utterance's id, and a layer's mask is a hash of (the key, the
// layer, the position): row b keeps element (t, c) when the 32-bit hash of (row b's key for the
// layer, t * C + c) falls below (1 - p) * 2^32 (compared on its top 24 bits, as a float uniform
// would be), over the utterance's own positions (its length x the layer's channels, never the
// batch's padded length), and is 0 past them. The same utterance at the same step then gets the
// same masks on any rank, in any batch, after any restart, on any device, and the process's own
// random stream is never touched (a resumed run needs nothing more to repeat).
//
// Everything is 32-bit integer arithmetic, exact on every device: the CPU computes the masks in
// one loop, other devices with integer tensor operations (tested equal on the CPU). Nothing reads
// the host: the keys can be made on the device from the batch's utterance keys (Batch::
// utterance_keys) and the step as a device scalar, and the lengths are device tensors, so a
// captured CUDA graph that is replayed draws the masks of the step it replays (Note [Replaying a
// training step], train/cuda_graph_step.h).
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tts/core/hash.h"

namespace tts::models {

using tts::mix32;
// tts::mix32 (core/hash.h) on an int64 tensor of values in [0, 2^32), without overflow, on any
// device.
torch::Tensor mix32(const torch::Tensor& x);

class KeyedDropout {
 public:
  // The keys of one training step's batch, made on the host: `ids` in batch-row order, the keys
  // on `device`.
  KeyedDropout(uint64_t seed, int64_t step, const std::vector<std::string>& ids,
               const torch::Device& device = torch::kCPU);
  // The same keys made on the device: `step` a 0-dim int64 tensor (the optimizer step),
  // `utterance_keys` [B] int64 (utterance_key of each row's id) on the same device.
  KeyedDropout(uint64_t seed, const torch::Tensor& step, const torch::Tensor& utterance_keys);

  // A dropout multiplier [B, T, C] on `options`' device and dtype: row b is 0 or 1 / (1 - p) over
  // positions [0, lengths[b]) x C, and 0 past lengths[b] (a length past T covers all T). p must
  // be in (0, 1); `lengths` is [B] int64, on any device (moved to the mask's).
  torch::Tensor mask(uint64_t layer, double p, int64_t T, int64_t C, const torch::Tensor& lengths,
                     const torch::TensorOptions& options) const;
  // The same with the lengths on the host.
  torch::Tensor mask(uint64_t layer, double p, int64_t T, int64_t C,
                     const std::vector<int64_t>& lengths,
                     const torch::TensorOptions& options) const;

  int64_t rows() const { return keys_.size(0); }
  // [B] int64 in [0, 2^32): each row's key for this step.
  const torch::Tensor& keys() const { return keys_; }

  // What mask() computes, with integer tensor operations whatever the device (what a device other
  // than the CPU runs; exposed for tests).
  torch::Tensor mask_by_tensor_operations(uint64_t layer, double p, int64_t T, int64_t C,
                                          const torch::Tensor& lengths,
                                          const torch::TensorOptions& options) const;

 private:
  torch::Tensor keys_;
};

}  // namespace tts::models
