#include "tts/train/static_batches.h"

#include "tts/core/error.h"

namespace tts::train {

StaticBatches::StaticBatches(int max_shapes) : max_shapes_(max_shapes) {
  TTS_CHECK(max_shapes_ >= 1, "static batches: at most {} shapes, which must be >= 1", max_shapes);
}

StaticBatches::Slot& StaticBatches::load(const FamilyBatch& batch) {
  const std::string shape = batch.static_shape();
  TTS_CHECK(!shape.empty(),
            "train.cuda_graphs: this model family's batches have no static shape to replay; set "
            "train.cuda_graphs: false");
  auto found = slots_.find(shape);
  if (found == slots_.end()) {
    TTS_CHECK(size() < max_shapes_,
              "train.cuda_graphs: a batch of shape ({}) would be shape {} of the run, past its "
              "{}: set train.length_buckets lower, or train.cuda_graphs: false",
              shape, size() + 1, max_shapes_);
    Slot slot;
    slot.shape = shape;
    slot.buffers = batch.allocate_static();
    TTS_CHECK(slot.buffers != nullptr,
              "train.cuda_graphs: this model family cannot allocate static batch buffers; set "
              "train.cuda_graphs: false");
    found = slots_.emplace(shape, std::move(slot)).first;
  }
  Slot& slot = found->second;
  batch.copy_into(*slot.buffers);
  ++slot.loads;
  return slot;
}

}  // namespace tts::train
