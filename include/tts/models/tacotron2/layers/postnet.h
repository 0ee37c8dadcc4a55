// Tacotron-2's postnet (NVIDIA/tacotron2's model.py architecture, our own code).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/rnn.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include <utility>
#include <vector>

#include "tts/config/train_options.h"
#include "tts/models/family_sections.h"
#include "tts/models/frame_windows.h"
#include "tts/models/tacotron2/layers/batch_context.h"
#include "tts/models/tacotron2/layers/recurrent.h"

namespace tts::tacotron2 {

// Postnet: `postnet_n_convolutions` x (Conv1d + BatchNorm), tanh on all but the last, dropout
// after each. Predicts a residual added to the decoder's mel. With zero_padding_in_convolutions,
// padded frames are zeroed before every convolution, as in the encoder; without, as NVIDIA's, the
// convolutions see what the decoder produced there. With model.nvidia_postnet_gradient (and
// without zero padding), the first convolution's weight gradient is taken from the input with its
// padded frames zeroed, while its output (and every other gradient) is computed from the input as
// it is: what NVIDIA's training computes, whose mask_padding zeroes the decoder's outputs in place
// (through `.data`) after the postnet has read them, under the tensor its convolution saved for
// backward.
class PostnetImpl : public torch::nn::Module {
 public:
  PostnetImpl(const config::ModelOptions& options, int64_t n_mels);
  // mel [B, T, n_mels], lengths [B] -> residual [B, T, n_mels], zero at padded frames.
  // `context`: keyed dropout and global BatchNorm in training.
  torch::Tensor forward(const torch::Tensor& mel, const torch::Tensor& lengths,
                        const BatchContext& context = {});
  // The frames an output frame sees on each side, from the convolutions' shapes.
  models::ReceptiveField receptive_field() const;

 private:
  std::vector<torch::nn::Conv1d> convolutions_;
  std::vector<torch::nn::BatchNorm1d> norms_;
  double p_dropout_;
  bool zero_padding_;
  bool nvidia_gradient_;
};
TORCH_MODULE(Postnet);

}  // namespace tts::tacotron2
