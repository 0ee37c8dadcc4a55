// Dropout whose masks belong to the utterance, not to the rank or the batch it lands in.
//
// Note [Dropout keyed by utterance]: W ranks x B utterances train as 1 rank x W*B only if each
// utterance is dropped out the same way wherever it is batched. libtorch's dropout draws from one
// stream per process, in batch order: a 2-rank run and a 1-rank run draw different masks for the
// same utterance. Here each utterance of a training step has its own stream, keyed by (the run's
// seed, the optimizer step, the utterance's id): a layer's mask for row b is drawn from that
// stream re-seeded with the layer's id, over the utterance's own positions (its length x the
// layer's channels, never the batch's padded length), and is 0 past them. The same utterance
// at the same step then gets the same masks on any rank, in any batch, after any restart, and the
// process's own random stream is left as it was (a resumed run needs nothing more to repeat). On
// CUDA the rows are drawn on the device, from its generator re-seeded per row (Philox: the values
// depend on the seed and the row's size alone).
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tts::models {

class KeyedDropout {
 public:
  // The streams of one training step's batch: `ids` in batch-row order.
  KeyedDropout(uint64_t seed, int64_t step, const std::vector<std::string>& ids);

  // A dropout multiplier [B, T, C] on `options`' device and dtype: row b is 0 or 1 / (1 - p) over
  // positions [0, lengths[b]) x C, drawn from row b's stream for `layer`, and 0 past lengths[b].
  // p must be in (0, 1); lengths has B entries, each at most T.
  torch::Tensor mask(uint64_t layer, double p, int64_t T, int64_t C,
                     const std::vector<int64_t>& lengths,
                     const torch::TensorOptions& options) const;

  int64_t rows() const { return static_cast<int64_t>(keys_.size()); }
  // Row b's seed for `layer` (what mask() draws from; exposed for tests).
  uint64_t seed_of(int64_t row, uint64_t layer) const;

 private:
  std::vector<uint64_t> keys_;
};

}  // namespace tts::models
