// What a training forward of Tacotron-2 knows beyond its batch's tensors: the dropout keys of
// its utterances (Note [Dropout keyed by utterance], models/keyed_dropout.h; the masks' extents
// are the batch's length tensors), their lengths on the host (to check the inputs without a
// device synchronization) and the communicator that sums
// BatchNorm's statistics over the global batch (Note [BatchNorm over the global batch],
// models/global_batch_norm.h). A default context is what inference, validation and bench run
// with: libtorch's dropout stream and each BatchNorm's own statistics. gta gives eval mode a keyed
// context: its prenet masks (the only dropout on in eval mode) are then the utterances' own.
#pragma once

#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/types.h>

#include <cstdint>
#include <vector>

#include "tts/models/keyed_dropout.h"

namespace tts::dist {
class Communicator;
}  // namespace tts::dist

namespace tts::tacotron2 {

struct BatchContext {
  const models::KeyedDropout* dropout = nullptr;  // null: libtorch's stream
  // Each row's symbols and mel frames on the host, for the input checks (empty: read from the
  // batch's tensors).
  std::vector<int64_t> text_lengths;
  std::vector<int64_t> mel_lengths;
  dist::Communicator* batch_norm = nullptr;  // null: each rank's own batch statistics
  // The prenet's dropout, on in training and inference as NVIDIA's (keyed when `dropout` is
  // set, in any mode); false: off (gta --prenet-dropout off).
  bool prenet_dropout = true;

  bool keyed() const { return dropout != nullptr; }
};

// The layers' keys in a KeyedDropout: one per place the model drops out.
namespace dropout_layer {
inline constexpr uint64_t kEncoder = 0x100;       // + convolution index
inline constexpr uint64_t kPrenet = 0x200;        // + layer index
inline constexpr uint64_t kAttentionRnn = 0x300;  // the attention LSTM's output
inline constexpr uint64_t kDecoderRnn = 0x301;    // the decoder LSTM's output
inline constexpr uint64_t kPostnet = 0x400;       // + convolution index
}  // namespace dropout_layer

// x [B, C, T] (channels first) times the keyed mask of `layer` over each row's `lengths`, when the
// context is keyed and p > 0; else libtorch's dropout in training; else x.
torch::Tensor channels_first_dropout(const torch::Tensor& x, double p, bool training,
                                     uint64_t layer, const torch::Tensor& lengths,
                                     const BatchContext& context);

// norm(conv(x)) for x [B, C_in, T] (conv's output cut to `frames` frames when >= 0): BatchNorm
// over the global batch's real positions (`valid` [B, 1, T]) when the context has a
// communicator for it, with the convolution's bias apart (Note [BatchNorm over the global
// batch]); else the modules' own (PyTorch's Conv1d and BatchNorm1d).
torch::Tensor conv_batch_norm(torch::nn::Conv1dImpl& conv, torch::nn::BatchNorm1dImpl& norm,
                              const torch::Tensor& x, const torch::Tensor& valid,
                              const BatchContext& context, int64_t frames = -1);
// norm(y) by the same rule, for a y with no bias just before.
torch::Tensor batch_norm(torch::nn::BatchNorm1dImpl& norm, const torch::Tensor& y,
                         const torch::Tensor& valid, const BatchContext& context);

// Keyed masks of a step-major tensor [steps, B, C] (the decoder's): [steps, B, C] over each
// row's `row_steps` ([B] int64 on any device) decoder steps. Undefined when p is 0.
torch::Tensor step_major_mask(double p, uint64_t layer, int64_t steps, int64_t C,
                              const torch::Tensor& row_steps, const BatchContext& context,
                              const torch::TensorOptions& options);

}  // namespace tts::tacotron2
