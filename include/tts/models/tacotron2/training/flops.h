// How much arithmetic a Tacotron-2 training step is, counted from the model's shapes, and how much
// the machine can do: together they say how close a measured step is to the hardware's limit.
#pragma once

#include <torch/types.h>

#include <cstdint>

#include "tts/models/family_sections.h"

namespace tts::tacotron2 {

// The shape of a teacher-forced training batch.
struct StepShape {
  int64_t batch = 1;
  int64_t text_len = 1;  // symbols per utterance
  int64_t frames = 1;    // mel frames per utterance (a multiple of r)
  int64_t n_mels = 80;
  int64_t n_linear = 0;  // linear bins of the CBHG head; 0 without it
};

// Floating-point operations (a multiply-add counts 2) of one step's matrix products and
// convolutions: the encoder's convolutions and BiLSTM, per decoder step the prenet, both LSTM
// cells, the attention (query, location convolution and projection, energies, context) and the
// mel and stop projections, the postnet and, with model.predict_linear, the CBHG head. Element-wise
// work (activations, BatchNorm, the optimizer) is left out: a few percent. `forward` is the
// forward pass; a training step is counted as 3 x forward (backward computes the gradients of
// both the inputs and the weights of every product, each as costly as the forward product).
struct StepFlops {
  double forward = 0;
  double training() const { return 3 * forward; }
};
StepFlops count_step_flops(const config::ModelOptions& options, const StepShape& shape);

}  // namespace tts::tacotron2
