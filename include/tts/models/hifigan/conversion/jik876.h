// Interoperation with jik876/hifi-gan: its config.json, its generator file g_XXXXXXXX
// ({'generator': state_dict}) and its training file do_XXXXXXXX ({'mpd', 'msd', 'optim_g',
// 'optim_d', 'steps', 'epoch'}) in (import) and out (export). Our networks carry jik876's
// parameter names, so tensors map one to one; the optimizer states index parameters by position,
// which our modules register in jik876's order (optim_d: the MSD's, then the MPD's).
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tts/config/config.h"

namespace tts::hifigan {

// One parameter's torch.optim.AdamW state.
struct AdamParamState {
  torch::Tensor exp_avg;     // first moment; undefined for a parameter never stepped
  torch::Tensor exp_avg_sq;  // second moment; undefined likewise
  int64_t step = 0;          // updates applied to this parameter
};

// What an AdamW state_dict holds for jik876's one parameter group.
struct AdamState {
  double lr = 0;          // param_groups[0]['lr']: the learning rate after the last decay
  double initial_lr = 0;  // param_groups[0]['initial_lr']: ExponentialLR's base rate
  std::vector<AdamParamState> params;  // one per parameter, in the optimizer's parameter order
};

// The tensors and counters of jik876's two files; state dicts keyed without prefixes.
struct Jik876State {
  std::map<std::string, torch::Tensor> generator;  // Generator's state dict
  std::map<std::string, torch::Tensor> mpd;        // MultiPeriodDiscriminator's (empty: none)
  std::map<std::string, torch::Tensor> msd;        // MultiScaleDiscriminator's (empty: none)
  std::optional<AdamState> optim_g;                // over the generator's parameters
  std::optional<AdamState> optim_d;                // over the MSD's, then the MPD's parameters
  int64_t steps = 0;                               // do_ file's 'steps': the last step's number
  int64_t epoch = 0;                               // do_ file's 'epoch': the epoch it was in
  // Batches of that epoch already trained: our do_ files' extra key 'batch_in_epoch' (jik876's
  // code ignores it); 0 for jik876's own files, whose train.py restarts the epoch on resume.
  int64_t batch_in_epoch = 0;
};

// An import: jik876's state and the settings of its config.json in our sections.
struct HifiganImport : Jik876State {
  config::HifiganOptions hifigan;  // resblock, upsampling, residual kernels, segment_size
  config::AudioOptions audio;      // sampling_rate, n_fft, hop_size, win_size, num_mels, fmin, fmax
  config::TrainOptions train;      // batch_size, learning_rate, adam_b1/b2, lr_decay, seed
  config::Config config;           // the whole config the files were read against
};

// `base` with jik876's config.json at `config_json_path` applied: its model keys into section
// hifigan, its audio keys into audio, its training keys into train, with what jik876's train.py
// does implicitly (AdamW with weight decay 0.01 and eps 1e-8, the rate decayed once per epoch, no
// gradient clip) and model.kind hifigan. num_gpus, num_workers and dist_config are ignored. The
// file is read as JSON by formats::read_json_file (bounded size and depth; a file that is no JSON
// is a tts::Error). Throws UsageError naming the file and the key for an unknown key, a value of
// the wrong type or out of range; tts::Error when its generator passes the parameter budget. A
// segment_size that is not a whole number of hops is cut to whole frames, with a warning.
config::Config hifigan_config_from_json(const std::string& config_json_path, config::Config base);

// Reads jik876's generator file and, unless `do_file` is empty, its training file, checking every
// tensor's name and shape against the networks of the config: that of `config_json` (applied
// to `base`) or, when it is empty, `base` itself. Throws tts::Error naming the file, the key
// and both shapes for a tensor that does not fit, and the key for one that is missing or
// unexpected.
HifiganImport import_jik876(const std::string& generator_file, const std::string& do_file,
                            const std::string& config_json, const config::Config& base);

// Writes `state` as jik876's train.py saves it into the folder `out_dir` (created): g_SSSSSSSS
// and, when `state` has discriminators, do_SSSSSSSS (SSSSSSSS = steps), and config.json, whose
// keys jik876's code reads from `config`. Tensors are checked against the config's networks as
// import_jik876 checks them. Throws UsageError when jik876's code cannot build the generator
// (audio.n_mels other than 80: its first convolution reads 80 channels).
void export_jik876(const Jik876State& state, const std::string& out_dir,
                   const config::Config& config);

}  // namespace tts::hifigan

namespace tts::checkpoint {
struct Checkpoint;
}

namespace tts::hifigan {

// Our checkpoint of `imported`'s weights under `config` (model.kind hifigan): the generator's,
// and the discriminators' when the import has them (else their initialization under the
// config's seed); step and epoch from the do_ file, and with it both AdamW states (moments and
// per-parameter steps, in our optimizers' order): `train --resume` from it continues jik876's
// training, `train --init-from` it fine-tunes with fresh moments.
checkpoint::Checkpoint checkpoint_from_jik876(const HifiganImport& imported,
                                              const config::Config& config);

// jik876's state of our checkpoint (trained under `config`): the networks' tensors, step and
// epoch, and both AdamW states when the checkpoint has the discriminators and their optimizers
// (in jik876's order; initial_lr is config's learning rate, the base of its ExponentialLR).
Jik876State jik876_from_checkpoint(const checkpoint::Checkpoint& checkpoint,
                                   const config::Config& config);

}  // namespace tts::hifigan
