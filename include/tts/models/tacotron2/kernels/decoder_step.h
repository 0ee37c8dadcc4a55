// The decoder's recurrent step as one autograd node, on the CPU and (in a build with CUDA) on a
// GPU: the attention LSTM, the location-sensitive attention and the decoder LSTM of one step,
// forward in one call and backward in one node (decoder_step.cpp). Composed of the per-part nodes
// it is ~50 operators forward and ~15 autograd nodes backward a step, each paying the
// dispatcher, autograd's bookkeeping and, on a GPU, a launch; the step's arithmetic is the same
// either way: the parts' kernels (fused_kernels.h; on CUDA decoder_step_kernels.cu, with the
// element-wise arithmetic of cell_math.h), the same products and the same convolution.
#pragma once

#include <torch/torch.h>

#include <cstdint>

#include "tts/models/tacotron2/layers/decoder.h"
#include "tts/models/tacotron2/layers/recurrent.h"

namespace tts::tacotron2::detail {

// What every step of an utterance batch reads (DecoderImpl::StepContext's parts).
struct DecoderStepConstants {
  torch::Tensor memory;            // [B, T, E]
  torch::Tensor processed_memory;  // [B, A, T]
  torch::Tensor mask;              // [B, 1, T] bool, true where padded
  torch::Tensor location;          // [A, 2, K]: the composed location convolution
  torch::Tensor v;                 // [A]
  torch::Tensor decoder_bias;      // [4 H_dec]
  const RecurrentWeight* attention_weight = nullptr;  // [4 H_att, E + H_att]
  const RecurrentWeight* query_weight = nullptr;      // [A, H_att]
  const RecurrentWeight* decoder_weight = nullptr;    // [4 H_dec, H_att + E + H_dec]
  int64_t padding = 0;                                // of the location convolution
  // Where the steps sum the gradients of the tensors above (share_step_constants; shared
  // tensors), or undefined: each step then hands out its own.
  StepConstantGradients gradients;
};

// Where the fused steps can run (step_kernels: the CPU, CUDA in a build with it; float or
// double, no autocast) and a gradient is needed: replaces memory, processed_memory, location, v and
// decoder_bias by the outputs of one autograd node whose backward hands out `gradients`, the sums
// the steps accumulate, plus any gradient a step composed of other nodes gave. Otherwise leaves
// everything as it is.
void share_step_constants(torch::Tensor& memory, torch::Tensor& processed_memory,
                          torch::Tensor& location, torch::Tensor& v, torch::Tensor& decoder_bias,
                          StepConstantGradients& gradients);

// Whether the fused step runs these tensors: all on one device that has its kernels
// (step_kernels), float or double alike (so not under autocast), the masks of the decoder's
// shapes.
bool fused_decoder_step_applies(const DecoderStepConstants& constants,
                                const torch::Tensor& input_gates,
                                const torch::Tensor& attention_mask,
                                const torch::Tensor& decoder_mask, const DecoderState& state);

// Advances `state` by one step (as DecoderImpl::step) and returns the step's attention weights
// [B, 1, T].
torch::Tensor fused_decoder_step(const DecoderStepConstants& constants,
                                 const torch::Tensor& input_gates,
                                 const torch::Tensor& attention_mask,
                                 const torch::Tensor& decoder_mask, DecoderState& state);

}  // namespace tts::tacotron2::detail
