// Ground-truth-aligned mels for vocoder fine-tuning (WaveGlow, HiFi-GAN): teacher-forced
// inference over a feature store, one postnet mel per utterance.
#pragma once

#include <cstdint>
#include <string>

namespace tts::inference {

struct GtaRequest {
  std::string checkpoint;  // ours: a file, RUN/checkpoints/latest or a run directory
  std::string data_dir;    // the feature store (its config must fit the checkpoint's)
  std::string out_dir;     // DIR/ID.npy [n_mels, frames] float32, DIR/filelist.txt and, when
                           // the store keeps waveforms, a feature store (see run_gta)
  std::string wavs_dir;    // the LJSpeech corpus the store was made from (its wavs/ID.wav)
  int rank = 0;            // this process handles the utterances i with i % world_size == rank
  int world_size = 1;
  int local_rank = 0;  // selects the GPU as a training rank's (dist::rank_device)
  int local_world_size = 1;
};

struct GtaSummary {
  int64_t written = 0;  // mels computed by this process
  int64_t reused = 0;   // already complete in out_dir (a resumed run)
};

// Computes, in eval mode with teacher forcing (the prenet's dropout as the config says), the
// postnet mel of every utterance of the store (train and validation) this rank handles, in
// batches of the per-rank batch size the checkpoint trained with (train.batch_size, or the
// r_schedule row in force) sorted by text length as NVIDIA's collate does, and writes each as
// out_dir/ID.npy, exactly the target's frames, atomically. Files already there with the right
// shape are kept (resumable). Rank 0 writes out_dir/filelist.txt, one "WAV_PATH|MEL_PATH" line
// per utterance. When the store keeps waveforms (audio.waveforms), out_dir is also a feature store
// a vocoder fine-tunes on (`tts-train train --data out_dir`): mels/ID.npy [frames, n_mels] (the
// predicted mels), waveforms/ID.npy (the audio they are aligned with), the source's train/val
// split and its settings in features.yaml. Throws tts::Error / UsageError naming what does not
// fit.
GtaSummary run_gta(const GtaRequest& request);

}  // namespace tts::inference
