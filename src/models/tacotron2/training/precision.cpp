#include "tts/models/tacotron2/training/precision.h"

#include <torch/torch.h>

#include "../kernels/autocast.h"
#include "tts/core/error.h"
#include "tts/models/tacotron2/layers/layers.h"

namespace tts::tacotron2 {

TacotronOutput at_least_float(const TacotronOutput& out) {
  TacotronOutput result = out;  // every other field (lengths, r) as it is
  for (torch::Tensor* t :
       {&result.mel, &result.mel_postnet, &result.gate, &result.alignments, &result.linear}) {
    *t = detail::at_least_float(*t);
  }
  return result;
}

TacotronOutput forward_in_precision(Tacotron2Impl& model, const torch::Tensor& text,
                                    const torch::Tensor& text_lengths, const torch::Tensor& mel,
                                    const torch::Tensor& mel_lengths, config::Precision precision,
                                    const BatchContext& context, const torch::Tensor& speakers) {
  TacotronOutput out;
  {
    train::AutocastScope autocast(text.device(), precision);
    out = model.forward(text, text_lengths, mel, mel_lengths, context, speakers);
  }
  return at_least_float(out);
}

}  // namespace tts::tacotron2
