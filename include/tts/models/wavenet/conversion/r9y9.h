// Interoperation with r9y9/wavenet_vocoder: its checkpoints (.pth: train.py's {state_dict,
// global_step, global_epoch}, a bare state dict, either with DDP's "module." prefix) and its
// hparams.json in; the same layout out, which r9y9's WaveNet loads with load_state_dict(strict).
// Our parameter names are r9y9's (network.h), so tensors pass by name with no mapping.
//
// r9y9's mels are not NVIDIA's (what our audio section computes by default): its preprocess.py
// takes log10(max(mel, 1e-10)) of the magnitude STFT (librosa, reflect padding, Slaney mel scale
// and norm), and preprocess_normalize.py then standardizes every channel by the training set's
// mean and variance (compute-meanvar-stats.py's scaler, not stored in the checkpoint). A model
// imported from r9y9 needs mels made that way; the audio settings returned here are the STFT and
// filterbank sizes only.
#pragma once

#include <torch/nn/module.h>
#include <torch/types.h>

#include <cstdint>
#include <map>
#include <string>

#include "tts/config/audio_options.h"
#include "tts/models/wavenet/options.h"

namespace tts::wavenet {

// What r9y9's hparams.json says, in our config's terms.
struct R9y9Hparams {
  config::WavenetOptions wavenet;  // validated
  // sample_rate, n_fft (fft_size), hop_length (hop_size or frame_shift_ms), win_length
  // (win_length or win_length_ms), n_mels (num_mels), fmin, fmax (null: sample_rate / 2),
  // preemphasis (0.85 where r9y9's preprocess is "preemphasis", else 0); the rest at defaults.
  config::AudioOptions audio;
};

struct WavenetImport {
  config::WavenetOptions wavenet;                // from the hparams (gin, embedding: the file's)
  config::AudioOptions audio;                    // as R9y9Hparams::audio
  std::map<std::string, torch::Tensor> tensors;  // r9y9's = our names, float32, every one
  int64_t global_step = 0;                       // the file's global_step (0 without one)
};

// Reads r9y9's hparams.json `path` (at most 1 MiB). Throws tts::Error naming the file and the key
// for a value out of its range or of the wrong type, and for settings we cannot run (input_type
// other than raw, an upsample_net other than ConvInUpsampleNetwork, an upsample activation,
// cin_channels other than num_mels).
R9y9Hparams read_r9y9_hparams(const std::string& path);

// Reads r9y9's checkpoint `checkpoint` for the network `hparams_json` describes. A speaker
// embedding is used when the file has embed_speakers.weight (r9y9's train.py builds none; its
// hparams do not record it). Throws tts::Error naming the file and each state-dict key that is
// missing, unexpected or of another shape than the hparams give, with the hparams keys to check.
WavenetImport import_r9y9(const std::string& checkpoint, const std::string& hparams_json);

// The named tensors of `model` (a WaveNet) as r9y9's state_dict holds them.
std::map<std::string, torch::Tensor> wavenet_state_dict(torch::nn::Module& model);

// Copies `tensors` (r9y9's names) into `model`, every one; throws tts::Error as import_r9y9
// does for names or shapes that do not fit, `source` naming where they came from.
void load_wavenet_state_dict(torch::nn::Module& model,
                             const std::map<std::string, torch::Tensor>& tensors,
                             const std::string& source);

// Writes r9y9's layout: `checkpoint` ({state_dict, global_step, global_epoch: 0}, tensors on the
// CPU) and `hparams_json` (r9y9's keys for the network and audio settings given; r9y9's defaults
// stand for the rest), both atomically. Throws tts::Error for options r9y9 cannot express.
void export_r9y9(const std::string& checkpoint, const std::string& hparams_json,
                 const config::WavenetOptions& wavenet, const config::AudioOptions& audio,
                 const std::map<std::string, torch::Tensor>& tensors, int64_t global_step = 0);

}  // namespace tts::wavenet
