// Ground-truth-aligned mels for vocoder fine-tuning (WaveGlow, HiFi-GAN): teacher-forced
// inference over a feature store, one postnet mel per utterance.
#pragma once

#include "tts/models/roles.h"

namespace tts::tacotron2 {

// Computes from `trained` (request.checkpoint, already read), in eval mode with teacher forcing
// (the prenet's dropout as the config says), the postnet mel of every utterance of the store (train
// and validation) this rank handles, in batches of the per-rank batch size the checkpoint trained
// with (train.batch_size, or the r_schedule row in force) sorted by text length as NVIDIA's collate
// does, and writes each as out_dir/ID.npy, exactly the target's frames, atomically. Files already
// there with the right shape are kept (resumable). Rank 0 writes out_dir/filelist.txt, one
// "WAV_PATH|MEL_PATH" line per utterance. When the store keeps waveforms (audio.waveforms), out_dir
// is also a feature store a vocoder fine-tunes on (`tts-train train --data out_dir`): mels/ID.npy
// [frames, n_mels] (the predicted mels), waveforms/ID.npy (the audio they are aligned with), the
// source's train/val split and its settings in features.yaml. Throws tts::Error / UsageError naming
// what does not fit.
models::GtaSummary run_gta(const models::TrainedCheckpoint& trained,
                           const models::GtaRequest& request);

}  // namespace tts::tacotron2
