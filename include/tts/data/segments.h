// Training windows for vocoders: aligned pieces of a stored waveform and its mel (a feature store
// with audio.waveforms, or one `tts-train gta` wrote), batched for one rank.
//
// Alignment: mel frame t of a store is computed around sample t * hop (a centered STFT), so the
// window of frames [s, s + F) goes with samples [s * hop, (s + F) * hop), as jik876's HiFi-GAN
// cuts fine-tuning mels and r9y9's WaveNet cuts its windows. Past an utterance's end the audio is
// silence (zeros) and the mel its compressed silence (`SegmentSpec::mel_floor`); context frames
// before the start or after the end (WaveNet's cin_pad) repeat the edge frame, as r9y9 pads.
//
// Determinism (the two promises): each epoch the utterances are shuffled by (seed, epoch) and cut
// into global batches of batch_size x world_size; the utterances left over (fewer than a global
// batch) wait for another epoch's shuffle. Rank r takes utterances [r*B, (r+1)*B) of each global
// batch, and a window's start is a hash of (seed, epoch, utterance id): one rank with W*B
// utterances trains on exactly the windows W ranks with B utterances do.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tts/data/feature_store.h"

namespace tts::data {

struct SegmentSpec {
  int64_t frames = 0;   // mel frames of a window (audio: frames * hop samples)
  int64_t hop = 0;      // samples per mel frame
  int64_t context = 0;  // extra mel frames on each side (WaveNet's cin_pad); 0 for HiFi-GAN
  float mel_floor = 0;  // a silent frame's compressed value, for frames past the end
};

struct SegmentBatch {
  torch::Tensor mel;    // [B, n_mels, frames + 2 * context] float32
  torch::Tensor audio;  // [B, 1, frames * hop] float32
  // [B] int64: each utterance's row of the model's speaker table; undefined for a one-speaker
  // model (a loader without a table).
  torch::Tensor speakers;
  std::vector<std::string> ids;

  int64_t size() const { return static_cast<int64_t>(ids.size()); }
  SegmentBatch to(const torch::Device& device, bool non_blocking = false) const;
  SegmentBatch pin_memory() const;
};

// The first frame of `id`'s window in `epoch`: uniform over [0, n_frames - frames] (0 when the
// utterance is shorter than a window), from (seed, epoch, id) alone.
int64_t window_start(int64_t seed, int64_t epoch, const std::string& id, int64_t n_frames,
                     int64_t frames);

// Reads utterance `u`'s window starting at frame `start` into `mel` [n_mels, frames + 2 context]
// and `audio` [frames * hop]. Throws tts::Error naming the file and the utterance when a file is
// not what the store's tables promise (dtype, shape, length).
void read_window(const Utterance& u, int64_t start, const SegmentSpec& spec, int64_t n_mels,
                 float* mel, float* audio);

// Reads a whole utterance: mel [n_mels, n_frames] and waveform [n_samples] (validation).
struct WholeUtterance {
  torch::Tensor mel;       // [n_mels, n_frames]
  torch::Tensor waveform;  // [n_samples]
};
WholeUtterance read_utterance(const Utterance& u, int64_t n_mels);

// One rank's windows, batch by batch, loaded ahead on a background thread (data.num_workers 0:
// on the caller's thread).
class SegmentLoader {
 public:
  // Throws UsageError when `utterances` cannot fill one global batch. `speakers`: the model's
  // speaker table (names in row order); when not empty, each batch carries its utterances' rows
  // (SegmentBatch::speakers), and an utterance whose speaker is not in it is refused (tts::Error
  // naming it). Empty: batches without speakers.
  SegmentLoader(std::vector<Utterance> utterances, int64_t n_mels, SegmentSpec spec, int batch_size,
                int rank, int world_size, int64_t seed, int prefetch_batches, bool background,
                bool pin_memory, const std::vector<std::string>& speakers = {});
  ~SegmentLoader();
  SegmentLoader(const SegmentLoader&) = delete;
  SegmentLoader& operator=(const SegmentLoader&) = delete;

  // Starts `epoch` after its first `skip` batches.
  void start_epoch(int64_t epoch, int64_t skip = 0);
  // The next batch, or nullopt at the end of the epoch. Rethrows a loading error.
  std::optional<SegmentBatch> next();
  int64_t batches_per_epoch() const;
  double wait_seconds() const;
  // The utterance indices of this rank's batches in `epoch`.
  std::vector<std::vector<int64_t>> rank_batches(int64_t epoch) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tts::data
