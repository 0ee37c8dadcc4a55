// The prefetching loader of one rank: background threads (data.num_workers) read the .npy targets
// of this rank's batches (BalancedSampler), check them, collate, and put the batches into a
// bounded queue (data.prefetch_batches) ahead of the training step. Batches come out in the
// sampler's order whatever the threads' timing, so a run is reproducible.
//
// Bad feature files (wrong dtype, not 2-D, wrong bins, frames != metadata, unreadable) name the
// file and the utterance. With data.on_bad_file: error, next() throws. With skip, the utterance
// is left out of its batch, which is one smaller: the batch still exists, so every rank takes the
// same number of steps (a batch whose utterances are all bad stops the run). Each bad file is
// logged once and counted; the count is logged at the end of each epoch.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tts/config/config.h"
#include "tts/data/batch.h"
#include "tts/data/feature_store.h"
#include "tts/data/phase.h"
#include "tts/data/sampler.h"

namespace tts::data {

// Cleaned text -> symbol ids (the trainer passes tts::text::TextProcessor::to_ids).
using Tokenizer = std::function<std::vector<int64_t>(const std::string&)>;

class Loader {
 public:
  // Tokenizes every utterance once here (on the calling thread; an utterance whose text gives no
  // ids is dropped with a logged count, identically on every rank) and builds the sampler from
  // the phase's per-rank batch size, config.train.seed and config.data.sort_pool_batches. Batches
  // are padded to a multiple of the phase's r; a new phase takes a new loader. Loads linear targets
  // when config.audio.linear or config.model.predict_linear. With `pin_memory` (the rank's
  // placement: data.pin_memory on CUDA, dist/placement.h), batches come in page-locked memory.
  // `speakers`: the model's speaker table (names in row order); when not empty, each batch
  // carries its utterances' rows (Batch::speakers), and an utterance whose speaker is not in it is
  // refused (tts::Error naming it). Empty: batches without speakers.
  Loader(const FeatureStore& store, std::vector<Utterance> utterances, const config::Config& config,
         const Phase& phase, Tokenizer tokenizer, int rank, int world_size, bool pin_memory = false,
         const std::vector<std::string>& speakers = {});
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  // Starts loading the batches of `epoch`, after the first `skip_batches` (to resume mid-epoch).
  // Stops the workers of an unfinished previous epoch first.
  void start_epoch(int64_t epoch, int64_t skip_batches = 0);
  // The next batch, or nullopt at the end of the epoch. Rethrows a worker's error (tts::Error).
  std::optional<Batch> next();
  // Seconds next() spent waiting for a batch, cumulative over the loader's life.
  double wait_seconds() const;
  int64_t batches_per_epoch() const;
  // Utterances left out of batches because their feature files were bad, cumulative.
  int64_t skipped_utterances() const;
  // Padding fraction and rank imbalance of `epoch` (all ranks' batches).
  BalancedSampler::Report report(int64_t epoch) const;
  // Pads every batch up to its bucket of `buckets` (train.length_buckets; empty: each batch to
  // its longest), from the next start_epoch on. Throws tts::Error when a frame boundary is not a
  // multiple of the loader's r or an utterance is longer than the last bucket.
  void set_length_buckets(LengthBuckets buckets);
  const LengthBuckets& length_buckets() const;
  // The padding of `epoch`'s batches (all ranks') padded up to `buckets` (empty: each batch to
  // its longest), frames and text.
  BatchStats padding_report(int64_t epoch, const LengthBuckets& buckets) const;
  // Symbols of each utterance's text (index = utterance index).
  std::vector<int64_t> text_lengths() const;
  const std::vector<Utterance>& utterances() const;
  const BalancedSampler& sampler() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tts::data
