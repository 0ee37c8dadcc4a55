// Warm start from one of our checkpoints, by tensor name: a new run's model takes the weights of
// a checkpoint of its own family, except the skipped ones; the optimizer and the step count start
// fresh. A family that also reads other frameworks' files or remaps rows (Tacotron-2: NVIDIA's
// files, the embedding by symbol) reads them in its own folder and hands the tensors to
// warm_start_tensors, the one matcher every warm start goes through.
#pragma once

#include <torch/types.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tts/checkpoint/state_dict.h"

namespace torch::nn {
class Module;
}

namespace tts::checkpoint {

struct Checkpoint;  // checkpoint.h

// Copies into `model` every tensor of the newest checkpoint at `path` (a file, RUN/checkpoints/
// latest or a run folder) whose name does not start with one of `skip`; the model's tensors the
// checkpoint lacks keep their initialization. Throws tts::Error naming the file for one that is
// not a checkpoint of ours, and listing every tensor outside `skip` whose shape differs (both
// shapes, and the --init-skip that would skip them). Returns a one-line summary for the log.
std::string warm_start(torch::nn::Module& model, const std::string& path,
                       const std::vector<std::string>& skip);

// The same from a checkpoint already in memory (a family's import of its reference
// implementation's files), read from `source`, a `kind` of file ("jik876/hifi-gan files").
std::string warm_start_from(torch::nn::Module& model, const Checkpoint& checkpoint,
                            const std::string& source, const std::string& kind,
                            const std::vector<std::string>& skip);

// What every warm start does once its source is read: `source` (tensors under the file's names,
// read from `source_name`, a `kind` of file) copied into `targets` (model_tensors() of the model,
// named as the file names them), except the targets whose name or stored name starts with one of
// `skip`; `remap`, when given, may rewrite source tensors once the targets are known (rows
// remapped by symbol or speaker) and returns the summary's words on it. Throws as warm_start does;
// returns the one-line summary.
using WarmStartRemap = std::function<std::string(std::map<std::string, torch::Tensor>& source,
                                                 const std::vector<ModelTensor>& targets)>;
std::string warm_start_tensors(std::vector<ModelTensor> targets,
                               std::map<std::string, torch::Tensor> source,
                               const std::string& source_name, const std::string& kind,
                               const std::vector<std::string>& skip,
                               const WarmStartRemap& remap = nullptr);

}  // namespace tts::checkpoint
