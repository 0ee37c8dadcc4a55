// Tacotron-2's forward in train.precision (train/precision.h says what bf16 is): the teacher-forced
// forward under autocast, its outputs in fp32, and its own autograd nodes' explicit dtype policy
// (src/models/tacotron2/kernels/autocast.h).
#pragma once

#include <torch/types.h>

#include <string>

#include "tts/config/train_options.h"
#include "tts/models/tacotron2/layers/network.h"
#include "tts/train/precision.h"

namespace tts::tacotron2 {

// The teacher-forced forward in `precision` (train.precision), its outputs in fp32 (at least): the
// losses, alignment metrics and plots read fp32 whatever the forward ran in.
TacotronOutput forward_in_precision(Tacotron2Impl& model, const torch::Tensor& text,
                                    const torch::Tensor& text_lengths, const torch::Tensor& mel,
                                    const torch::Tensor& mel_lengths, config::Precision precision,
                                    const BatchContext& context = {},
                                    const torch::Tensor& speakers = {});

// `out` with every floating tensor in fp32 at least (bf16 and fp16 cast up, others unchanged).
TacotronOutput at_least_float(const TacotronOutput& out);

}  // namespace tts::tacotron2
