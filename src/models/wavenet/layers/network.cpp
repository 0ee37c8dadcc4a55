#include "tts/models/wavenet/layers/network.h"

#include <torch/torch.h>

#include <cmath>
#include <memory>
#include <string>

#include "tts/core/error.h"
#include "tts/models/parameter_budget.h"
#include "tts/models/wavenet/layers/parameter_count.h"

namespace tts::wavenet {
namespace F = torch::nn::functional;
namespace {

// A module that only names its children, for r9y9's nn.ModuleList paths (conv_layers.3,
// last_conv_layers.1, up_layers.5: libtorch names may not contain dots).
std::shared_ptr<torch::nn::Module> holder(torch::nn::Module& parent, const std::string& name) {
  return parent.register_module(name, std::make_shared<torch::nn::Module>());
}

}  // namespace

WeightNormConvImpl::WeightNormConvImpl(int64_t in, int64_t out, std::vector<int64_t> kernel,
                                       bool with_bias, int64_t dilation_)
    : dilation(dilation_) {
  // r9y9's registration order (weight_norm re-registers the weight after the bias).
  if (with_bias) bias = register_parameter("bias", torch::zeros({out}));
  std::vector<int64_t> v_shape{out, in};
  v_shape.insert(v_shape.end(), kernel.begin(), kernel.end());
  std::vector<int64_t> g_shape(v_shape.size(), 1);
  g_shape[0] = out;
  // r9y9's init: kaiming_normal_ (ReLU gain) for 1-d convolutions; the upsampler's 2-d ones
  // average their window. weight_norm then starts g at ||v||.
  torch::Tensor v;
  if (kernel.size() == 1) {
    v = torch::randn(v_shape) * std::sqrt(2.0 / static_cast<double>(in * kernel[0]));
  } else {
    v = torch::full(v_shape, 1.0 / static_cast<double>(kernel[0] * kernel[1]));
  }
  std::vector<int64_t> dims;
  for (int64_t d = 1; d < v.dim(); ++d) dims.push_back(d);
  weight_g = register_parameter("weight_g", v.norm(2, dims, /*keepdim=*/true).reshape(g_shape));
  weight_v = register_parameter("weight_v", v);
}

torch::Tensor WeightNormConvImpl::weight() const {
  return torch::_weight_norm(weight_v, weight_g, 0);
}

torch::Tensor WeightNormConvImpl::forward(const torch::Tensor& x) const {
  const int64_t left = (weight_v.size(2) - 1) * dilation;
  torch::Tensor padded = left > 0 ? F::pad(x, F::PadFuncOptions({left, 0})) : x;
  return F::conv1d(padded, weight(), F::Conv1dFuncOptions().bias(bias).dilation(dilation));
}

ResidualLayerImpl::ResidualLayerImpl(const config::WavenetOptions& options, int64_t cin_channels,
                                     int64_t dilation)
    : dropout(options.dropout) {
  const int64_t r = options.residual_channels;
  const int64_t gate = options.gate_channels;
  conv = register_module(
      "conv", WeightNormConv(r, gate, std::vector<int64_t>{options.kernel_size}, true, dilation));
  conv1x1c = register_module("conv1x1c",
                             WeightNormConv(cin_channels, gate, std::vector<int64_t>{1}, false));
  if (options.gin_channels > 0) {
    conv1x1g = register_module(
        "conv1x1g", WeightNormConv(options.gin_channels, gate, std::vector<int64_t>{1}, false));
  }
  conv1x1_out =
      register_module("conv1x1_out", WeightNormConv(gate / 2, r, std::vector<int64_t>{1}, true));
  conv1x1_skip = register_module("conv1x1_skip", WeightNormConv(gate / 2, options.skip_out_channels,
                                                                std::vector<int64_t>{1}, true));
}

std::pair<torch::Tensor, torch::Tensor> ResidualLayerImpl::forward(const torch::Tensor& x,
                                                                   const torch::Tensor& c,
                                                                   const torch::Tensor& g) {
  torch::Tensor h =
      conv->forward(F::dropout(x, F::DropoutFuncOptions().p(dropout).training(is_training())));
  h = h + conv1x1c->forward(c);
  if (g.defined()) h = h + conv1x1g->forward(g);  // [B, gate, 1] broadcast over time
  auto halves = h.chunk(2, 1);
  torch::Tensor z = torch::tanh(halves[0]) * torch::sigmoid(halves[1]);
  torch::Tensor skip = conv1x1_skip->forward(z);
  torch::Tensor out = (conv1x1_out->forward(z) + x) * std::sqrt(0.5);
  return {out, skip};
}

UpsampleNetworkImpl::UpsampleNetworkImpl(const config::WavenetOptions& options,
                                         int64_t cin_channels)
    : scales(options.upsample_scales.begin(), options.upsample_scales.end()),
      freq_padding((options.freq_axis_kernel_size - 1) / 2) {
  const int64_t taps = 2 * options.cin_pad + 1;
  // nn.Conv1d's default init (kaiming_uniform_ with a = sqrt(5)): U(-1/sqrt(fan_in), ...).
  const double bound = 1.0 / std::sqrt(static_cast<double>(cin_channels * taps));
  conv_in =
      holder(*this, "conv_in")
          ->register_parameter(
              "weight", torch::rand({cin_channels, cin_channels, taps}) * (2 * bound) - bound);
  auto up_layers = holder(*holder(*this, "upsample"), "up_layers");
  for (size_t i = 0; i < scales.size(); ++i) {
    // up_layers holds (Stretch2d, Conv2d) per scale: the convolutions are its odd entries.
    stages.push_back(up_layers->register_module(
        std::to_string(2 * i + 1),
        WeightNormConv(1, 1, std::vector<int64_t>{options.freq_axis_kernel_size, 2 * scales[i] + 1},
                       false)));
  }
}

torch::Tensor UpsampleNetworkImpl::forward(const torch::Tensor& mel) const {
  torch::Tensor c = F::conv1d(mel, conv_in).unsqueeze(1);  // [B, 1, n_mels, F]
  for (size_t i = 0; i < scales.size(); ++i) {
    // Nearest-neighbour stretch along time: repeat_interleave(scales[i], 3) is this index_select
    // (the same forward and backward), but builds its index from a host read of the repeats.
    const int64_t frames = c.size(3);
    const torch::Tensor index = torch::arange(frames, c.options().dtype(torch::kLong))
                                    .unsqueeze(1)
                                    .expand({frames, scales[i]})
                                    .reshape({-1});
    c = c.index_select(3, index);
    c = F::conv2d(
        c, stages[i]->weight(),
        F::Conv2dFuncOptions().padding(torch::ExpandingArray<2>({freq_padding, scales[i]})));
  }
  return c.squeeze(1);
}

int64_t layer_dilation(const config::WavenetOptions& options, int64_t layer) {
  return int64_t{1} << (layer % (options.layers / options.stacks));
}

WaveNetImpl::WaveNetImpl(const config::WavenetOptions& options, int64_t cin_channels)
    : options_(options), cin_channels_(cin_channels) {
  models::require_parameter_budget(parameter_count(options, cin_channels), "wavenet::WaveNet",
                                   kSizingKeys);
  first_conv = register_module(
      "first_conv", WeightNormConv(1, options.residual_channels, std::vector<int64_t>{1}, true));
  auto conv_layers = holder(*this, "conv_layers");
  for (int64_t i = 0; i < options.layers; ++i) {
    layers.push_back(conv_layers->register_module(
        std::to_string(i), ResidualLayer(options, cin_channels, layer_dilation(options, i))));
  }
  auto last = holder(*this, "last_conv_layers");
  const int64_t skip = options.skip_out_channels;
  last_conv1 =
      last->register_module("1", WeightNormConv(skip, skip, std::vector<int64_t>{1}, true));
  last_conv3 = last->register_module(
      "3", WeightNormConv(skip, options.out_channels, std::vector<int64_t>{1}, true));
  if (options.gin_channels > 0 && options.use_speaker_embedding) {
    embed_speakers = register_module(
        "embed_speakers", torch::nn::Embedding(options.n_speakers, options.gin_channels));
    torch::NoGradGuard no_grad;
    embed_speakers->weight.normal_(0, 0.1);  // r9y9's std for the speaker embedding
  }
  upsample_net = register_module("upsample_net", UpsampleNetwork(options, cin_channels));
}

int64_t WaveNetImpl::hop() const {
  int64_t hop = 1;
  for (int scale : options_.upsample_scales) hop *= scale;
  return hop;
}

int64_t WaveNetImpl::receptive_field() const {
  int64_t dilations = 0;
  for (int64_t i = 0; i < options_.layers; ++i) dilations += layer_dilation(options_, i);
  return (options_.kernel_size - 1) * dilations + 1;
}

torch::Tensor WaveNetImpl::global_features(const torch::Tensor& g, int64_t batch) {
  if (options_.gin_channels <= 0) {
    TTS_CHECK(!g.defined(),
              "WaveNet: a speaker was given but wavenet.gin_channels is {} (no global "
              "conditioning); pass none",
              options_.gin_channels);
    return {};
  }
  TTS_CHECK(g.defined(),
            "WaveNet: wavenet.gin_channels is {} but no speaker was given; pass speaker ids [B]",
            options_.gin_channels);
  if (embed_speakers) {
    TTS_CHECK(g.dim() == 1 && g.size(0) == batch && g.scalar_type() == torch::kLong,
              "WaveNet: expected int64 speaker ids [{}], found a {} tensor of shape {}", batch,
              c10::toString(g.scalar_type()), g.sizes());
    TTS_CHECK(g.numel() == 0 ||
                  (g.min().item<int64_t>() >= 0 && g.max().item<int64_t>() < options_.n_speakers),
              "WaveNet: speaker ids must be in [0, {}) (wavenet.n_speakers)", options_.n_speakers);
    return embed_speakers->forward(g).unsqueeze(2);
  }
  TTS_CHECK(g.dim() == 2 && g.size(0) == batch && g.size(1) == options_.gin_channels,
            "WaveNet: expected speaker features [{}, {}] (wavenet.use_speaker_embedding is "
            "false), found shape {}",
            batch, options_.gin_channels, g.sizes());
  return g.unsqueeze(2);
}

torch::Tensor WaveNetImpl::head(const torch::Tensor& skips) const {
  return last_conv3->forward(torch::relu(last_conv1->forward(torch::relu(skips))));
}

torch::Tensor WaveNetImpl::forward(const torch::Tensor& x, const torch::Tensor& mel,
                                   const torch::Tensor& g) {
  TTS_CHECK(x.dim() == 3 && x.size(1) == 1, "WaveNet: expected audio [B, 1, T], found shape {}",
            x.sizes());
  TTS_CHECK(mel.dim() == 3 && mel.size(0) == x.size(0) && mel.size(1) == cin_channels_ &&
                (mel.size(2) - 2 * options_.cin_pad) * hop() == x.size(2),
            "WaveNet: audio {} needs mels [{}, {}, {}] (T/hop + 2*cin_pad frames), found {}",
            x.sizes(), x.size(0), cin_channels_, x.size(2) / hop() + 2 * options_.cin_pad,
            mel.sizes());
  torch::Tensor gb = global_features(g, x.size(0));
  torch::Tensor c = upsample_net->forward(mel);
  torch::Tensor h = first_conv->forward(x);
  torch::Tensor skips;
  for (auto& layer : layers) {
    auto [out, skip] = layer->forward(h, c, gb);
    h = out;
    skips = skips.defined() ? skips + skip : skip;
  }
  return head(skips * std::sqrt(1.0 / static_cast<double>(layers.size())));
}

torch::Tensor pad_mel(const torch::Tensor& mel, int64_t cin_pad) {
  if (cin_pad == 0) return mel;
  return F::pad(mel, F::PadFuncOptions({cin_pad, cin_pad}).mode(torch::kReplicate));
}

}  // namespace tts::wavenet
