// Warm start (NVIDIA's --warm_start with ignore_layers): a new run's model takes the weights of a
// checkpoint of ours or of an NVIDIA/tacotron2 file (mapped by name), except the skipped ones;
// the optimizer and the step count start fresh.
#pragma once

#include <string>
#include <vector>

namespace torch::nn {
class Module;
}

namespace tts::checkpoint {

// Copies into `model` (a model::Tacotron2) every tensor of `path` whose name, ours or NVIDIA's,
// does not start with one of `skip`; tensors the source lacks keep their initialization. Throws
// tts::Error listing every tensor outside `skip` whose shape differs (with both shapes and the
// --init-skip that would skip it). Returns a one-line summary for the log.
std::string warm_start(torch::nn::Module& model, const std::string& path,
                       const std::vector<std::string>& skip);

}  // namespace tts::checkpoint
