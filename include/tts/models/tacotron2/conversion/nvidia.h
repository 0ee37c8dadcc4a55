// Interoperation with NVIDIA/tacotron2: its checkpoints in (import) and out (export), name by
// name. NVIDIA's train.py saves {iteration, state_dict, optimizer, learning_rate}; a bare state
// dict and DDP's "module." prefix are read too. Our model is NVIDIA's architecture with other
// parameter names (encoder.conv0 for encoder.convolutions.0.0.conv, ...); nvidia_name() is the
// one mapping between them.
#pragma once

#include <torch/types.h>

#include <map>
#include <string>
#include <vector>

#include "tts/checkpoint/checkpoint.h"
#include "tts/config/config.h"
#include "tts/formats/torch_file.h"

namespace tts::tacotron2 {

// NVIDIA's name of our tensor `ours` (a parameter or buffer name of tacotron2::Tacotron2); empty
// when NVIDIA's model has no such tensor (the linear head).
std::string nvidia_name(const std::string& ours);

// The state dict of NVIDIA's file `path` (its train.py checkpoint, a bare state dict, either with
// DDP's "module." prefix, which is removed) under NVIDIA's names. Throws tts::Error naming the
// file: a legacy (pre-1.6) file with the command that re-saves it, one of our checkpoints, or
// something that is not a state dict.
std::map<std::string, torch::Tensor> read_nvidia_state_dict(const std::string& path);

// The same from `root`, the value already read from `path`.
std::map<std::string, torch::Tensor> nvidia_state_dict(const formats::PickleValue& root,
                                                       const std::string& path);

// Reads NVIDIA's file `path` into a checkpoint of ours for the model `config` describes
// (config_yaml = the resolved config, step = NVIDIA's iteration, no optimizer state). Throws
// tts::Error listing missing and unexpected names, and for each shape mismatch the config key
// and the value that would fit; UsageError for a config NVIDIA's model cannot fill (a linear head).
checkpoint::Checkpoint import_nvidia(const std::string& path, const config::Config& config);

// The hyperparameters NVIDIA's hparams.py needs to build the model of `config`, as the
// comma-separated `--hparams` string of its train.py.
std::string nvidia_hparams(const config::Config& config);

// Writes `checkpoint` as NVIDIA's train.py would ({iteration, state_dict, learning_rate}, with
// NVIDIA's names) to `out`, atomically, and returns nvidia_hparams(). Throws UsageError naming
// why when NVIDIA's code cannot express the model (n_frames_per_step > 1, a linear head, a symbol
// set other than nvidia).
std::string export_nvidia(const checkpoint::Checkpoint& checkpoint, const std::string& out);

}  // namespace tts::tacotron2
