// Tacotron-2's alignment plot of one utterance, which validation and `synthesize --plot` share
// (the mel panels and stop curves every family draws: models/plot_tensors.h).
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>

#include "tts/report/plots.h"

namespace tts::tacotron2 {

// The alignment plot of one utterance: `weights` [decoder steps, encoder steps], its real
// lengths only; the title carries its diagonal score and focus rate, computed here.
report::Plot utterance_alignment_plot(const torch::Tensor& weights, int64_t step,
                                      const std::string& utterance, const std::string& kind);

}  // namespace tts::tacotron2
