// Autoregressive generation with the WaveNet, incrementally: every layer keeps a queue of its last
// (kernel_size - 1) * dilation + 1 inputs, so a step computes one new column per layer and nothing
// again (cost linear in samples, memory per layer constant), for a batch of utterances at once.
// The mels are upsampled once up front; their per-layer projections are computed a block of
// samples at a time by one matrix product.
//
// It runs on the CPU whatever the model's device (its weights, folded from weight norm, and the
// inputs are copied there) and returns CPU tensors. Utterances of other lengths share a batch with
// their mels padded to the longest (repeating their last frame); keep each one's first frames * hop
// samples (the upsampler's convolutions let the last few of them see past its end).
#pragma once

#include <torch/types.h>

#include <cstdint>

#include "tts/models/frame_windows.h"
#include "tts/models/roles.h"
#include "tts/models/wavenet/layers/network.h"

namespace tts::wavenet {

// Audio [B, T] in [-1, 1] for mels [B, n_mels, F + 2*cin_pad] (padded as pad_mel() does for a
// whole utterance), T = F * hop. `seed` seeds a CPU torch::Generator of the call's own (the
// default generator is neither used nor advanced), so a seed gives the same audio on every run.
// The model must be in eval mode (no dropout); `g` as WaveNetImpl::forward. Throws tts::Error for
// inputs that do not fit the model.
torch::Tensor generate(WaveNet& model, const torch::Tensor& mel, uint64_t seed,
                       const torch::Tensor& g = {});

// One utterance's audio as its mel frames [n, n_mels] come (unpadded: the stream repeats the edge
// frames as pad_mel does), in chunks of `plan`: the samples generate() gives the whole mel, pad_mel
// padded, with the same seed, up to the rounding of the upsampling on windows. `model` in eval
// mode; `g` as generate()'s, for one utterance.
std::unique_ptr<models::VocoderStream> generation_stream(WaveNet& model, uint64_t seed,
                                                         const torch::Tensor& g,
                                                         const models::ChunkPlan& plan);

// The mel frames the upsampling network of `options` (with pad_mel's repeated edges) reads on each
// side of a sample's conditioning.
models::ReceptiveField upsampling_field(const config::WavenetOptions& options);

// The incremental path's output [B, out_channels, T] when step t is fed x[.., t] (teacher
// forcing) instead of its own sample: equal, up to rounding, to model->forward(x, mel, g) in
// eval mode. x [B, 1, T], mel and g as generate().
torch::Tensor incremental_logits(WaveNet& model, const torch::Tensor& mel, const torch::Tensor& x,
                                 const torch::Tensor& g = {});

}  // namespace tts::wavenet
