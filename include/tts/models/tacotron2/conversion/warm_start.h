// Warm start (NVIDIA's --warm_start with ignore_layers): a new run's model takes the weights of a
// checkpoint of ours or of an NVIDIA/tacotron2 file (mapped by name), except the skipped ones;
// the optimizer and the step count start fresh.
#pragma once

#include <torch/types.h>

#include <string>
#include <vector>

namespace torch::nn {
class Module;
}

namespace tts::tacotron2 {

// Copies into `model` (a tacotron2::Tacotron2) every tensor of `path` whose name, ours or NVIDIA's,
// does not start with one of `skip`; tensors the source lacks keep their initialization. Throws
// tts::Error listing every tensor outside `skip` whose shape differs (with both shapes and the
// --init-skip that would skip it). Returns a one-line summary for the log.
//
// The symbol embedding is copied by symbol, not by id: `symbols` is the model's table (id
// order); the source's is the one its checkpoint records (for older checkpoints, its config's
// text.symbol_set; for NVIDIA's files, NVIDIA's 148 symbols). Each row of a symbol both tables
// hold is copied; the rows of symbols the source lacks keep their initialization, and the summary
// says how many were copied and which are new.
//
// The speaker embedding likewise by speaker: `speakers` is the model's speaker table (row order),
// the source's the one its checkpoint records. A source without one (a one-speaker model, ours or
// NVIDIA's) leaves every row zero, so the model starts as the source computes; rows of speakers
// the source lacks stay zero. The summary says which.
std::string warm_start(torch::nn::Module& model, const std::string& path,
                       const std::vector<std::string>& skip,
                       const std::vector<std::string>& symbols,
                       const std::vector<std::string>& speakers = {});

// The embedding of `target_symbols`: `initialized` (the new model's rows) with the row of every
// symbol `source_symbols` also holds replaced by `source`'s. `source` is [source symbols, dim]
// and `initialized` [target symbols, dim]; throws tts::Error when the shapes do not say so.
// `new_symbols` receives the target's symbols the source lacks.
torch::Tensor remap_embedding(const torch::Tensor& source,
                              const std::vector<std::string>& source_symbols,
                              const torch::Tensor& initialized,
                              const std::vector<std::string>& target_symbols,
                              std::vector<std::string>* new_symbols);

}  // namespace tts::tacotron2
