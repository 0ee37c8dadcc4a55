// Tacotron-2's encoder (NVIDIA/tacotron2's model.py architecture, our own code).
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
#include "tts/models/tacotron2/layers/batch_context.h"
#include "tts/models/tacotron2/layers/recurrent.h"
#include "tts/models/tacotron2/options.h"

namespace tts::tacotron2 {

// Encoder: `encoder_n_convolutions` x (Conv1d + BatchNorm + ReLU + dropout), then a BiLSTM of
// encoder_embedding_dim/2 units per direction over the packed sequences. With
// zero_padding_in_convolutions, padded positions are zeroed before every convolution, so an
// item's output does not depend on how much padding the batch gives it (in eval mode; BatchNorm's
// batch statistics do in training mode); without, as NVIDIA's, the convolutions see the padding
// symbol's embedding.
class EncoderImpl : public torch::nn::Module {
 public:
  explicit EncoderImpl(const config::ModelOptions& options);
  // embedded [B, T_text, symbols_embedding_dim], lengths [B] -> [B, T_text, encoder_embedding_dim],
  // zero at padded positions. `context`: keyed dropout and global BatchNorm in training.
  torch::Tensor forward(const torch::Tensor& embedded, const torch::Tensor& lengths,
                        const BatchContext& context = {});
  void set_recurrent_products(RecurrentProductPath path) { recurrent_products_ = path; }
  void set_lstm_padding(RnnPadding padding) { lstm_padding_ = padding; }

 private:
  RecurrentProductPath recurrent_products_ = config::Tacotron2Options{}.recurrent_products;
  RnnPadding lstm_padding_ = RecurrencePaths{}.lstm;
  std::vector<torch::nn::Conv1d> convolutions_;
  std::vector<torch::nn::BatchNorm1d> norms_;
  torch::nn::LSTM lstm_{nullptr};
  double p_dropout_;
  bool zero_padding_;
};
TORCH_MODULE(Encoder);

}  // namespace tts::tacotron2
