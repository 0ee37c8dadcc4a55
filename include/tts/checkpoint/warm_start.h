// Warm start from one of our checkpoints, by tensor name: a new run's model takes the weights of
// a checkpoint of its own family, except the skipped ones; the optimizer and the step count start
// fresh. A family that also reads other frameworks' files or remaps rows (Tacotron-2: NVIDIA's
// files, the embedding by symbol) does so in its own folder around the same matcher.
#pragma once

#include <string>
#include <vector>

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

}  // namespace tts::checkpoint
