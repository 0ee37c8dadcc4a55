// The static batch buffers of a run under train.cuda_graphs: one set per batch shape (a length
// bucket and batch size), made on the shape's first batch, each batch copied into its shape's set
// before the step that reads it. A captured CUDA graph reads the set it was captured with.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "tts/train/family.h"

namespace tts::train {

class StaticBatches {
 public:
  // Most shapes a run may have (each holds a batch's worth of device memory and, captured, a
  // graph): a handful of buckets times a couple of batch sizes.
  explicit StaticBatches(int max_shapes);

  struct Slot {
    std::string shape;
    std::unique_ptr<FamilyBatch> buffers;
    int64_t loads = 0;  // batches copied in so far, this one included
  };
  // The set of `batch`'s shape with `batch` copied into it. Throws tts::Error when the family
  // cannot replay its batches, or on a shape past max_shapes (naming train.length_buckets).
  Slot& load(const FamilyBatch& batch);
  int size() const { return static_cast<int>(slots_.size()); }

 private:
  int max_shapes_;
  std::map<std::string, Slot> slots_;
};

}  // namespace tts::train
