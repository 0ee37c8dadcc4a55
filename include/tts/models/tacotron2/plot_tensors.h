// Tensors to the plain inputs of plots.h: what validation and `synthesize --plot` share.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>

#include "tts/report/plots.h"

namespace tts::tacotron2 {

// A 2-D tensor (any device, floating dtype) as a float matrix of the same shape.
report::Matrix matrix_of(const torch::Tensor& values);

// The alignment plot of one utterance: `weights` [decoder steps, encoder steps], its real
// lengths only; the title carries its diagonal score and focus rate, computed here.
report::Plot utterance_alignment_plot(const torch::Tensor& weights, int64_t step,
                                      const std::string& utterance, const std::string& kind);

// A mel panel of `frames` [frames, n_mels].
report::MelPanel mel_panel(const std::string& title, const torch::Tensor& frames);

// A stop curve of `values` [frames] (probabilities or targets in [0, 1]).
report::StopCurve stop_curve(const std::string& label, const torch::Tensor& values,
                             bool dashed = false);

}  // namespace tts::tacotron2
