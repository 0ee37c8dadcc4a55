// The WaveNet vocoder of r9y9/wavenet_vocoder (its wavenet.py, modules.py, upsample.py; our own
// code): scalar input in [-1, 1], a 1x1 first convolution, `layers` dilated causal gated residual
// layers (dilation 2^(i mod layers/stacks)) conditioned on upsampled mels and optionally on a
// speaker, skip connections summed and scaled by sqrt(1/layers), then ReLU, 1x1, ReLU, 1x1 to the
// mixture's parameters. Every convolution but the upsampler's first is weight-normalized as
// torch.nn.utils.weight_norm does it (weight = g * v / ||v||, norm over all but the first
// dimension), with g and v the trained parameters.
//
// Parameter names are r9y9's state_dict keys, so its checkpoints load by name with no mapping:
// first_conv.{bias,weight_g,weight_v}, conv_layers.<i>.{conv,conv1x1c,conv1x1g,conv1x1_out,
// conv1x1_skip}.*, last_conv_layers.{1,3}.*, embed_speakers.weight, upsample_net.conv_in.weight,
// upsample_net.upsample.up_layers.<2j+1>.{weight_g,weight_v}.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include <vector>

#include "tts/models/wavenet/options.h"

namespace tts::wavenet {

// A weight-normalized convolution as r9y9 builds them (1-d, or 2-d for the upsampler): parameters
// bias (when `bias`), weight_g [out, 1, ...] and weight_v [out, in, kernel...].
class WeightNormConvImpl : public torch::nn::Module {
 public:
  WeightNormConvImpl(int64_t in, int64_t out, std::vector<int64_t> kernel, bool with_bias,
                     int64_t dilation = 1);
  // g * v / ||v||: the weight a forward uses (autograd reaches g and v).
  torch::Tensor weight() const;
  // A causal 1-d convolution of x [B, in, T]: left-padded by (kernel - 1) * dilation, [B, out, T].
  torch::Tensor forward(const torch::Tensor& x) const;

  torch::Tensor bias;      // [out], undefined without a bias
  torch::Tensor weight_g;  // [out, 1, 1(, 1)]
  torch::Tensor weight_v;  // [out, in, kernel...]
  int64_t dilation;        // of the 1-d convolution's taps
};
TORCH_MODULE(WeightNormConv);

// One dilated gated residual layer (r9y9's ResidualConv1dGLU, causal).
class ResidualLayerImpl : public torch::nn::Module {
 public:
  ResidualLayerImpl(const config::WavenetOptions& options, int64_t cin_channels, int64_t dilation);
  // x [B, R, T], c [B, n_mels, T] upsampled mels, g [B, gin, 1] or undefined. Returns the
  // residual output [B, R, T] and the skip output [B, S, T]; dropout on x as r9y9 (training only).
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& x, const torch::Tensor& c,
                                                  const torch::Tensor& g);

  WeightNormConv conv{nullptr};          // dilated, residual -> gate channels
  WeightNormConv conv1x1c{nullptr};      // mels -> gate channels, no bias
  WeightNormConv conv1x1g{nullptr};      // speaker -> gate channels, no bias; null without one
  WeightNormConv conv1x1_out{nullptr};   // gate/2 -> residual channels
  WeightNormConv conv1x1_skip{nullptr};  // gate/2 -> skip channels
  double dropout;                        // probability, on the layer's input in training
};
TORCH_MODULE(ResidualLayer);

// r9y9's ConvInUpsampleNetwork: conv_in (kernel 2*cin_pad+1, no padding, no bias) drops cin_pad
// frames each side, then per scale s a nearest-neighbour stretch by s along time and a
// weight-normalized Conv2d(1, 1, (freq_axis_kernel_size, 2s+1)) over (mel, time).
class UpsampleNetworkImpl : public torch::nn::Module {
 public:
  UpsampleNetworkImpl(const config::WavenetOptions& options, int64_t cin_channels);
  // mel [B, n_mels, F + 2*cin_pad] -> [B, n_mels, F * hop].
  torch::Tensor forward(const torch::Tensor& mel) const;

  torch::Tensor conv_in;               // conv_in.weight [n_mels, n_mels, 2*cin_pad+1]
  std::vector<int64_t> scales;         // upsample_scales
  std::vector<WeightNormConv> stages;  // one Conv2d per scale (upsample.up_layers.1, .3, ...)
  int64_t freq_padding;                // (freq_axis_kernel_size - 1) / 2
};
TORCH_MODULE(UpsampleNetwork);

class WaveNetImpl : public torch::nn::Module {
 public:
  // `cin_channels` = the mels' channels (audio.n_mels). `options` must have passed validate().
  WaveNetImpl(const config::WavenetOptions& options, int64_t cin_channels);

  // Teacher-forced output [B, out_channels, T] for audio x [B, 1, T] in [-1, 1] and mel
  // [B, n_mels, T/hop + 2*cin_pad]: column t parameterizes sample t+1 from x[..t]. `g`: the
  // speaker, global_features()'s input (undefined without global conditioning).
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& mel,
                        const torch::Tensor& g = {});

  // Global conditioning [B, gin_channels, 1] from int64 speaker ids [B] (with the embedding) or
  // float features [B, gin_channels]; undefined when gin_channels <= 0. Throws tts::Error for a
  // `g` that does not fit (missing, or a wrong shape or type).
  torch::Tensor global_features(const torch::Tensor& g, int64_t batch);

  // The 1x1 convolutions after the skip sum: ReLU, last_conv_layers.1, ReLU, last_conv_layers.3.
  torch::Tensor head(const torch::Tensor& skips) const;

  const config::WavenetOptions& options() const { return options_; }
  int64_t cin_channels() const { return cin_channels_; }
  // Samples per mel frame: the product of upsample_scales.
  int64_t hop() const;
  // Samples of past input an output sees: (kernel_size - 1) * sum of dilations + 1.
  int64_t receptive_field() const;

  WeightNormConv first_conv{nullptr};            // 1 -> residual channels
  std::vector<ResidualLayer> layers;             // conv_layers.<i>
  WeightNormConv last_conv1{nullptr};            // last_conv_layers.1: skip -> skip
  WeightNormConv last_conv3{nullptr};            // last_conv_layers.3: skip -> out_channels
  torch::nn::Embedding embed_speakers{nullptr};  // [n_speakers, gin]; null without one
  UpsampleNetwork upsample_net{nullptr};

 private:
  config::WavenetOptions options_;
  int64_t cin_channels_;
};
TORCH_MODULE(WaveNet);

// Dilation of layer `layer`: 2^(layer mod (layers / stacks)).
int64_t layer_dilation(const config::WavenetOptions& options, int64_t layer);

// mel [B, n_mels, F] padded by cin_pad frames each side by repeating the edge frames, as r9y9's
// evaluate.py pads a whole utterance before generation: [B, n_mels, F + 2*cin_pad].
torch::Tensor pad_mel(const torch::Tensor& mel, int64_t cin_pad);

}  // namespace tts::wavenet
