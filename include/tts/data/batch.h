// A training batch and the collation that makes it (NVIDIA/tacotron2's TextMelCollate).
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tts::data {

// Everything on the CPU unless moved with to(). Utterances are ordered by text length, longest
// first (as NVIDIA's collate does, so the encoder can pack its sequences).
struct Batch {
  torch::Tensor text;          // [B, T_text] int64, padded with the pad id 0
  torch::Tensor text_lengths;  // [B] int64
  torch::Tensor mel;           // [B, T_mel, n_mels] float32; T_mel = longest rounded up to r; zeros
  torch::Tensor mel_lengths;   // [B] int64, true lengths
  torch::Tensor stop;          // [B, T_mel] float32: 1 from the last real frame on, else 0
  torch::Tensor linear;        // [B, T_mel, n_linear] float32, or undefined
  // [B] int64: each utterance's row of the model's speaker table, or undefined for a one-speaker
  // model.
  torch::Tensor speakers;
  std::vector<std::string> ids;
  // Mel frames per decoder step it was collated for (T_mel is a multiple of it): part of its
  // static shape (static_batch.h), since the decoder's steps depend on it. 0: not collated.
  int64_t r = 0;
  // [B] int64: each utterance's dropout key (tts::utterance_key of its id), so that the keyed
  // masks are made on the device (Note [Dropout keyed by utterance], models/keyed_dropout.h).
  torch::Tensor utterance_keys;
  // Host-side counts, so that statistics need no device synchronization.
  std::vector<int64_t> text_length_values;  // text_lengths
  std::vector<int64_t> mel_length_values;   // mel_lengths
  int64_t real_frame_count = 0;             // sum of mel_lengths
  // Sum over utterances of decoder steps (mel_length / r, rounded up) x text length: the
  // (decoder step, text position) pairs the guided-attention loss averages over.
  int64_t attention_pair_count = 0;
  // The same counts for the whole global batch (every rank's batch of this step), from the
  // sampler's plan, which every rank knows: the loss weighting needs no collective (Note [Exact
  // global batch], models/tacotron2/training/teacher_forced.h). 0 outside a plan.
  int64_t global_real_frames = 0;
  int64_t global_attention_pairs = 0;
  // Static buffers only (static_batch.h): [4] int64 on the batch's device, real_frame_count,
  // attention_pair_count, global_real_frames, global_attention_pairs; what a replayed CUDA graph
  // must read instead of the host values above, which its capture froze. Else undefined.
  torch::Tensor counts;

  // Every tensor field above, named, in one place: to(), pin_memory() and the static buffers
  // (static_batch.h) go through it, so a new field cannot be left behind by one of them.
  std::vector<std::pair<const char*, torch::Tensor*>> tensors();
  std::vector<std::pair<const char*, const torch::Tensor*>> tensors() const;

  int64_t size() const { return static_cast<int64_t>(ids.size()); }
  int64_t padded_frames() const;  // B * T_mel
  int64_t real_frames() const { return real_frame_count; }
  // A copy with every tensor on `device` (non_blocking from pinned memory to CUDA).
  Batch to(const torch::Device& device, bool non_blocking = false) const;
  // A copy in page-locked host memory, for non-blocking copies to CUDA.
  Batch pin_memory() const;
};

// One loaded utterance before collation.
struct Example {
  std::string id;
  std::vector<int64_t> text;  // symbol ids, not empty
  torch::Tensor mel;          // [frames, n_mels] float32
  torch::Tensor linear;       // [frames, n_linear] float32, or undefined
  int64_t speaker = -1;       // its row of the model's speaker table; -1 for a one-speaker model
};

// The least padded lengths of a batch (a length bucket's boundaries, length_buckets.h): 0 pads to
// the batch's longest alone.
struct PadTo {
  int64_t text = 0;    // symbols
  int64_t frames = 0;  // mel frames, a multiple of the batch's r
};

// Pads and stacks `examples` (not empty; all with or all without linear, all with or all without
// a speaker row) into a Batch whose mel
// length is a multiple of `n_frames_per_step`. Throws tts::Error on inconsistent shapes, naming
// the utterance. `pad_to`: text and mel are padded to at least these lengths (the padding is
// the pad id, zero frames and stop targets of 1, as after a shorter utterance).
Batch collate(std::vector<Example> examples, int n_frames_per_step, PadTo pad_to = {});

}  // namespace tts::data
