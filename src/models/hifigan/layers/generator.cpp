#include "tts/models/hifigan/layers/generator.h"

#include "tts/core/error.h"
#include "tts/models/hifigan/layers/parameter_count.h"
#include "tts/models/parameter_budget.h"

namespace tts::hifigan {
namespace {

namespace F = torch::nn::functional;

torch::Tensor leaky(const torch::Tensor& x, double slope = kLeakySlope) {
  return F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(slope));
}

// The padding that keeps the length of a convolution of `kernel` taps with `dilation`.
int64_t same_padding(int64_t kernel, int64_t dilation) {
  return (kernel * dilation - dilation) / 2;
}

// Registers `convs` as the ModuleList `name` and returns them.
std::vector<NormConv> register_list(torch::nn::Module& parent, const std::string& name,
                                    std::vector<NormConv> convs) {
  torch::nn::ModuleList list;
  for (const NormConv& conv : convs) list->push_back(conv);
  parent.register_module(name, list);
  return convs;
}

}  // namespace

ResBlockImpl::ResBlockImpl(config::HifiganResblock type, int64_t channels, int64_t kernel,
                           const std::vector<int>& dilations) {
  std::vector<NormConv> dilated, plain;
  for (int d : dilations) {
    dilated.emplace_back(conv1d(channels, channels, kernel, 1, same_padding(kernel, d), d),
                         WeightNorm::kWeight);
    if (type == config::HifiganResblock::k1) {
      plain.emplace_back(conv1d(channels, channels, kernel, 1, same_padding(kernel, 1)),
                         WeightNorm::kWeight);
    }
  }
  if (type == config::HifiganResblock::k1) {
    dilated_ = register_list(*this, "convs1", std::move(dilated));
    plain_ = register_list(*this, "convs2", std::move(plain));
  } else {
    dilated_ = register_list(*this, "convs", std::move(dilated));
  }
}

torch::Tensor ResBlockImpl::forward(torch::Tensor x) {
  for (size_t i = 0; i < dilated_.size(); ++i) {
    torch::Tensor xt = dilated_[i]->forward(leaky(x));
    if (!plain_.empty()) xt = plain_[i]->forward(leaky(xt));
    x = xt + x;
  }
  return x;
}

GeneratorImpl::GeneratorImpl(const config::HifiganOptions& options, int n_mels)
    : n_mels_(n_mels), kernels_(static_cast<int64_t>(options.resblock_kernel_sizes.size())) {
  options.validate();
  TTS_CHECK(n_mels >= 1, "hifigan::Generator: n_mels must be at least 1, found {}", n_mels);
  models::require_parameter_budget(parameter_count(options, n_mels), "hifigan::Generator",
                                   kSizingKeys);
  const int64_t initial = options.upsample_initial_channel;
  conv_pre_ =
      register_module("conv_pre", NormConv(conv1d(n_mels, initial, 7, 1, 3), WeightNorm::kWeight));
  std::vector<NormConv> ups;
  for (size_t i = 0; i < options.upsample_rates.size(); ++i) {
    const int64_t rate = options.upsample_rates[i];
    const int64_t kernel = options.upsample_kernel_sizes[i];
    ConvSpec spec{ConvKind::kTransposed1d, initial >> i, initial >> (i + 1), {kernel}, {rate},
                  {(kernel - rate) / 2},   {1}};
    ups.emplace_back(spec, WeightNorm::kWeight);
  }
  ups_ = register_list(*this, "ups", std::move(ups));
  torch::nn::ModuleList blocks;
  for (size_t i = 0; i < ups_.size(); ++i) {
    for (int64_t j = 0; j < kernels_; ++j) {
      ResBlock block(options.resblock, initial >> (i + 1), options.resblock_kernel_sizes[j],
                     options.resblock_dilation_sizes[j]);
      blocks->push_back(block);
      resblocks_.push_back(block);
    }
  }
  register_module("resblocks", blocks);
  conv_post_ = register_module(
      "conv_post",
      NormConv(conv1d(initial >> options.upsample_rates.size(), 1, 7, 1, 3), WeightNorm::kWeight));
}

torch::Tensor GeneratorImpl::forward(const torch::Tensor& mel) {
  TTS_CHECK(mel.dim() == 3 && mel.size(1) == n_mels_,
            "hifigan::Generator: expected a mel [batch, {}, frames], found shape {}", n_mels_,
            mel.sizes().vec());
  torch::Tensor x = conv_pre_->forward(mel);
  for (size_t i = 0; i < ups_.size(); ++i) {
    x = ups_[i]->forward(leaky(x));
    torch::Tensor sum = resblocks_[i * kernels_]->forward(x);
    for (int64_t j = 1; j < kernels_; ++j) sum = sum + resblocks_[i * kernels_ + j]->forward(x);
    x = sum / static_cast<double>(kernels_);
  }
  // jik876 calls F.leaky_relu here without a slope: PyTorch's default, 0.01.
  return torch::tanh(conv_post_->forward(leaky(x, 0.01)));
}

models::ReceptiveField receptive_field(const config::HifiganOptions& options) {
  models::ReceptiveField field;
  field.convolution(7);  // conv_pre
  for (size_t i = 0; i < options.upsample_rates.size(); ++i) {
    const int64_t rate = options.upsample_rates[i];
    const int64_t kernel = options.upsample_kernel_sizes[i];
    field.transposed(kernel, rate, (kernel - rate) / 2);
    // The residual blocks run side by side on the stage's output and are averaged.
    // (Each block's convolutions in a row: their residual paths reach less far.)
    std::vector<models::ReceptiveField> blocks;
    for (size_t j = 0; j < options.resblock_kernel_sizes.size(); ++j) {
      const int64_t block_kernel = options.resblock_kernel_sizes[j];
      models::ReceptiveField block = field.branch();
      for (int d : options.resblock_dilation_sizes[j]) {
        block.convolution(block_kernel, d, same_padding(block_kernel, d));
        if (options.resblock == config::HifiganResblock::k1) {
          block.convolution(block_kernel, 1, same_padding(block_kernel, 1));
        }
      }
      blocks.push_back(block);
    }
    while (blocks.size() > 1) {  // the widest of all, two at a time
      models::ReceptiveField merged = field.branch();
      merged.widest_of(blocks[blocks.size() - 2], blocks.back());
      blocks.pop_back();
      blocks.back() = merged;
    }
    if (!blocks.empty()) field.widest_of(blocks[0], field.branch());
  }
  field.convolution(7, 1, 3);  // conv_post
  return field;
}

}  // namespace tts::hifigan
