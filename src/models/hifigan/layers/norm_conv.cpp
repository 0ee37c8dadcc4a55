#include "tts/models/hifigan/layers/norm_conv.h"

#include "tts/core/error.h"

namespace tts::hifigan {
namespace {

namespace F = torch::nn::functional;

// torch.nn.utils.spectral_norm's default epsilon of its normalizations.
constexpr double kSpectralEps = 1e-12;

// A freshly initialized plain convolution of `spec`: (weight, bias), drawn as PyTorch draws them.
std::pair<torch::Tensor, torch::Tensor> initial_weights(const ConvSpec& spec) {
  const int64_t k0 = spec.kernel.at(0);
  switch (spec.kind) {
    case ConvKind::kConv1d: {
      torch::nn::Conv1d conv(
          torch::nn::Conv1dOptions(spec.in_channels, spec.out_channels, k0).groups(spec.groups));
      return {conv->weight.detach(), conv->bias.detach()};
    }
    case ConvKind::kConv2d: {
      torch::nn::Conv2d conv(
          torch::nn::Conv2dOptions(spec.in_channels, spec.out_channels, {k0, spec.kernel.at(1)})
              .groups(spec.groups));
      return {conv->weight.detach(), conv->bias.detach()};
    }
    case ConvKind::kTransposed1d: {
      torch::nn::ConvTranspose1d conv(
          torch::nn::ConvTranspose1dOptions(spec.in_channels, spec.out_channels, k0)
              .groups(spec.groups));
      return {conv->weight.detach(), conv->bias.detach()};
    }
  }
  throw Error("NormConv: unknown convolution kind");
}

torch::Tensor normalized(const torch::Tensor& x) {
  return F::normalize(x, F::NormalizeFuncOptions().dim(0).eps(kSpectralEps));
}

}  // namespace

ConvSpec conv1d(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t padding,
                int64_t dilation, int64_t groups) {
  return ConvSpec{ConvKind::kConv1d, in, out, {kernel}, {stride}, {padding}, {dilation}, groups};
}

NormConvImpl::NormConvImpl(ConvSpec spec, WeightNorm norm) : spec_(std::move(spec)), norm_(norm) {
  const size_t dims = spec_.kind == ConvKind::kConv2d ? 2 : 1;
  TTS_CHECK(spec_.kernel.size() == dims && spec_.stride.size() == dims &&
                spec_.padding.size() == dims && spec_.dilation.size() == dims,
            "NormConv: kernel, stride, padding and dilation need {} entries each", dims);
  TTS_CHECK(norm_ == WeightNorm::kWeight || spec_.kind != ConvKind::kTransposed1d,
            "NormConv: spectral norm of a transposed convolution is not supported");
  auto [weight, bias] = initial_weights(spec_);
  // PyTorch's order: the convolution's bias stays, its weight is replaced by the norm's tensors.
  bias_ = register_parameter("bias", bias.clone());
  if (norm_ == WeightNorm::kWeight) {
    magnitude_ = register_parameter("weight_g", torch::norm_except_dim(weight, 2, 0).clone());
    direction_ = register_parameter("weight_v", weight.clone());
  } else {
    direction_ = register_parameter("weight_orig", weight.clone());
    const int64_t height = weight.size(0);
    const int64_t width = weight.numel() / height;
    u_ = register_buffer("weight_u", normalized(torch::randn({height})));
    v_ = register_buffer("weight_v", normalized(torch::randn({width})));
  }
}

torch::Tensor NormConvImpl::weight() {
  if (norm_ == WeightNorm::kWeight) return torch::_weight_norm(direction_, magnitude_, 0);
  const torch::Tensor matrix = direction_.reshape({direction_.size(0), -1});
  torch::Tensor u = u_, v = v_;
  if (is_training()) {
    // As torch.nn.utils.spectral_norm: the iteration updates the buffers in place, and the
    // weight's gradient flows through sigma with u and v held constant.
    torch::NoGradGuard no_grad;
    v_.copy_(normalized(torch::mv(matrix.t(), u_)));
    u_.copy_(normalized(torch::mv(matrix, v_)));
    u = u_.clone();
    v = v_.clone();
  }
  const torch::Tensor sigma = torch::dot(u, torch::mv(matrix, v));
  return direction_ / sigma;
}

torch::Tensor NormConvImpl::forward(const torch::Tensor& x) {
  const torch::Tensor w = weight();
  switch (spec_.kind) {
    case ConvKind::kConv1d:
      return torch::conv1d(x, w, bias_, spec_.stride, spec_.padding, spec_.dilation, spec_.groups);
    case ConvKind::kConv2d:
      return torch::conv2d(x, w, bias_, spec_.stride, spec_.padding, spec_.dilation, spec_.groups);
    case ConvKind::kTransposed1d:
      return torch::conv_transpose1d(x, w, bias_, spec_.stride, spec_.padding,
                                     /*output_padding=*/0, spec_.groups, spec_.dilation);
  }
  throw Error("NormConv: unknown convolution kind");
}

}  // namespace tts::hifigan
