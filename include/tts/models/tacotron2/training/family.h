// Tacotron-2 as a model family of the trainer core (train/family.h): text and mel batches from
// a feature store, Adam over every parameter with train.lr_schedule, the teacher-forced losses
// (forward.h), validation with alignment scores and free-running samples (validation.h), warm
// starts from our checkpoints and NVIDIA/tacotron2's.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>

#include "tts/data/batch.h"
#include "tts/data/static_batch.h"
#include "tts/models/registry.h"
#include "tts/train/family.h"

namespace tts::tacotron2 {

// A collated batch on the rank's device.
class TacotronBatch final : public train::FamilyBatch {
 public:
  explicit TacotronBatch(data::Batch batch) : batch(std::move(batch)) {}
  const std::vector<std::string>& ids() const override { return batch.ids; }
  train::BatchCounts counts() const override {
    return {batch.size(), batch.real_frames(), batch.padded_frames()};
  }
  std::string static_shape() const override { return data::shape_of(batch).describe(); }
  std::unique_ptr<train::FamilyBatch> allocate_static() const override {
    return std::make_unique<TacotronBatch>(data::allocate_like(batch, batch.mel.device()));
  }
  void copy_into(train::FamilyBatch& buffers) const override {
    data::copy_batch_into(static_cast<TacotronBatch&>(buffers).batch, batch, true);
  }
  data::Batch batch;
};

// The family of a training run: the store at context.data_dir, validation into context.run_dir.
std::unique_ptr<train::Family> make_family(const train::FamilyContext& context);

// inspect's lines for a Tacotron-2 checkpoint: r in force when it was written, the network's
// widths.
models::CheckpointSummary summarize_checkpoint(const checkpoint::Checkpoint& checkpoint,
                                               const config::Config& config);

// bench's subject: a family without a store (no batch source, no validation) over a symbol table
// of shape.symbols, and a synthetic teacher-forced batch (random mels, stop at the last frame).
train::BenchSubject make_bench(const train::FamilyContext& context, const train::BenchShape& shape);

// What the family registers (models/registry.h): training, bench, inspect, the size check and its
// roles after training.
models::FamilyEntry entry();

// NVIDIA/tacotron2's files in and out (`convert --from/--to nvidia`).
models::Converter nvidia_converter();

// `forward`: text ids [T_text] and a target mel [frames, n_mels] -> the teacher-forced mel,
// mel_postnet, gate and alignments.
models::ForwardRole forward_role();

}  // namespace tts::tacotron2
