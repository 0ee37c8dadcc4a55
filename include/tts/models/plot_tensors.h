// Tensors to the plain inputs of the torch-free plots (report/plots.h), for every family: the
// matrices, mel panels and stop curves that validation and `synthesize --plot` draw.
#pragma once

#include <torch/types.h>

#include <string>

#include "tts/report/plots.h"

namespace tts::models {

// A 2-D tensor (any device, floating dtype) as a float matrix of the same shape.
report::Matrix matrix_of(const torch::Tensor& values);

// A mel panel of `frames` [frames, n_mels].
report::MelPanel mel_panel(const std::string& title, const torch::Tensor& frames);

// A stop curve of `values` [frames] (probabilities or targets in [0, 1]).
report::StopCurve stop_curve(const std::string& label, const torch::Tensor& values,
                             bool dashed = false);

}  // namespace tts::models
