// Checkpoints, world-size agnostic: plain parameter names (no wrapper prefix), optimizer state,
// the training position, the RNG state and the resolved config. One file per checkpoint,
// RUN/checkpoints/step_<N>.pt, a pickled dict that Python's torch.load also reads; written to a
// temporary file, flushed and renamed, then `latest` (a symbolic link) is moved to it, so a crash
// never leaves a half checkpoint as `latest`.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tts/checkpoint/training_state.h"
#include "tts/config/config.h"
#include "tts/formats/torch_file.h"

namespace torch::nn {
class Module;
}
namespace torch::optim {
class Optimizer;
}

namespace tts::checkpoint {

// Adam's state as plain data: numbers and tensors, nothing a reader would have to run (the
// TorchScript archive torch::save writes for an optimizer can carry code that runs on load).
struct OptimizerState {
  struct Group {  // the options of one parameter group, and how many parameters it holds
    double lr = 0, beta1 = 0, beta2 = 0, eps = 0, weight_decay = 0;
    bool amsgrad = false;
    int64_t params = 0;
  };
  struct Param {  // one parameter's moments; has_state is false before its first step
    bool has_state = false;
    int64_t step = 0;
    torch::Tensor exp_avg, exp_avg_sq, max_exp_avg_sq;  // CPU; max_exp_avg_sq only with amsgrad
  };
  std::vector<Group> groups;
  std::vector<Param> params;  // every group's parameters, in group order
  // Set (to the file) when the checkpoint holds an older version's TorchScript optimizer archive,
  // which is not loaded: resuming from it is refused with the way forward.
  std::string unread_archive_of;

  bool empty() const { return groups.empty() && unread_archive_of.empty(); }
};

struct Checkpoint {
  TrainingState state;
  std::string config_yaml;  // the resolved config (tts::config::dump_config)
  std::vector<std::pair<std::string, torch::Tensor>> tensors;  // parameters then buffers, CPU
  std::vector<std::string> parameter_names;                    // which tensors are parameters
  // One per optimizer of the model family, in its order (a GAN has two); none for weights alone.
  std::vector<OptimizerState> optimizers;
  torch::Tensor rng_state;  // default CPU generator state
  // State of the default generator of the CUDA device the model trained on (dropout draws from
  // it there); undefined for a CPU run.
  torch::Tensor cuda_rng_state;
  // The input symbols the model's embedding rows stand for, in id order (text.symbol_set's table
  // when it trained): what synthesize checks and a warm start remaps by. Empty for a model without
  // text input and in checkpoints of older versions.
  std::vector<std::string> symbols;
  // The speakers the model's speaker embedding rows stand for, in row order (model.speakers may
  // leave rows past them unused): what synthesize --speaker and a resume map names by. Empty for
  // a model without speaker input and in checkpoints of older versions.
  std::vector<std::string> speakers;
  // The last validation's metrics when it was written ("val/loss", "val/diagonal_score", ...);
  // empty before the first validation and in checkpoints of older versions.
  std::vector<std::pair<std::string, double>> metrics;
};

// The tensors whose names start with `prefix` ("generator.", "ema."), keyed by the rest of the
// name: one network of a family's module.
std::map<std::string, torch::Tensor> tensors_with_prefix(const Checkpoint& checkpoint,
                                                         const std::string& prefix);

// Captures `model` (parameters and buffers, moved to CPU), the state of each of `optimizers` (torch
// Adam or AdamW), and the generators the model's device draws from.
Checkpoint capture(torch::nn::Module& model,
                   const std::vector<torch::optim::Optimizer*>& optimizers,
                   const TrainingState& state, const std::string& config_yaml);

// Copies the checkpoint's tensors into `model` (on the model's device). Throws tts::Error listing
// missing, unexpected and mis-shaped tensors with the checkpoint path (match_state_dict), and
// then copies none.
void restore_model(const Checkpoint& checkpoint, torch::nn::Module& model,
                   const std::string& source);
// Loads the optimizer's state onto the device of the optimizer's parameters, whatever device it
// was saved from (a checkpoint of cuda:0 resumes on cuda:3 or on the CPU). The optimizer must be
// torch::optim::Adam with the checkpoint's parameter groups and shapes; throws tts::Error otherwise
// and for an older checkpoint's TorchScript optimizer archive.
// `slot` is the optimizer's place in the family's list (Checkpoint::optimizers). A checkpoint
// without optimizer state (weights only) leaves `optimizer` fresh.
void restore_optimizer(const Checkpoint& checkpoint, size_t slot,
                       torch::optim::Optimizer& optimizer);
// Restores the CPU generator and, when `device` is a CUDA device and the checkpoint has a CUDA
// generator state, that device's generator.
void restore_rng(const Checkpoint& checkpoint, const torch::Device& device);

// Writes one checkpoint file at `path` atomically (what save_checkpoint writes per step).
void write_checkpoint(const std::string& path, const Checkpoint& checkpoint);

// Writes `dir`/step_<N>.pt atomically, points `dir`/latest to it and removes all but the newest
// `keep` checkpoints, sparing step_<spare_step>.pt (the best validation's, train.early_stopping;
// -1: none). Returns the path written.
std::string save_checkpoint(const std::string& dir, const Checkpoint& checkpoint, int keep,
                            int64_t spare_step = -1);

// The config a checkpoint was trained with, as its run's config file says, checked by the config's
// rules. `source` names it in errors. Its family's ceilings are checked by models::config_of,
// which everything that builds a network from a file reads the config through.
config::Config checkpoint_config(const Checkpoint& checkpoint, const std::string& source);

// The phase in force when the checkpoint was written (train.r_schedule changes r and the batch
// during training): its state's, or, where a checkpoint of an older version or an imported one
// lacks a value, the config's model.n_frames_per_step and train.batch_size (older versions wrote
// the phase in force there).
data::Phase checkpoint_phase(const Checkpoint& checkpoint, const config::Config& config);

// What a read of a checkpoint takes: everything (resuming, converting with the optimizer's state),
// or the weights and settings alone (speaking, forward, gta: the optimizers' states, twice the
// weights with Adam, are neither checked nor kept, and Checkpoint::optimizers stays empty).
enum class CheckpointRead { kWhole, kWeights };

// Reads one checkpoint file (a path, `.../latest`, a checkpoints directory or a run directory)
// with the same data-only torch.save reader as NVIDIA's files (formats::read_torch_file): tensors
// and plain values, anything else refused by name. Throws tts::Error naming the file when it is
// missing, corrupt or holds something else.
Checkpoint load_checkpoint(const std::string& path, CheckpointRead read = CheckpointRead::kWhole);

// The checkpoint in `root`, the value read from `file` (named in errors): what load_checkpoint
// does after reading, for a caller that read the file itself (once) to tell what it holds.
Checkpoint checkpoint_from_value(const formats::PickleValue& root, const std::string& file,
                                 CheckpointRead read = CheckpointRead::kWhole);

// Removes from the checkpoints folder `dir` the temporaries of saves that were killed before
// their rename (step_N.pt.tmp.<16 hex digits>, as fs.h's AtomicFile names them: regular files
// only, never a link, a folder or any other name) and returns their names, sorted. A missing
// folder, or one that is a link, is left alone. Run at the start of a run, before any save.
std::vector<std::string> remove_save_temporaries(const std::string& dir);

// Resolves what load_checkpoint accepts to the checkpoint files, newest first.
std::vector<std::string> checkpoint_files(const std::string& path);

// Loads the newest readable checkpoint under `path`; a corrupt newest one is reported (warning)
// and the previous one is used. `loaded_from` receives the file used. Throws when none is readable.
Checkpoint load_newest_checkpoint(const std::string& path, std::string* loaded_from = nullptr,
                                  CheckpointRead read = CheckpointRead::kWhole);

}  // namespace tts::checkpoint
