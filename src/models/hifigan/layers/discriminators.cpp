#include "tts/models/hifigan/layers/discriminators.h"

#include "tts/core/error.h"
#include "tts/models/hifigan/layers/generator.h"

namespace tts::hifigan {
namespace {

namespace F = torch::nn::functional;

constexpr int64_t kPeriods[] = {2, 3, 5, 7, 11};

torch::Tensor leaky(const torch::Tensor& x) {
  return F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(kLeakySlope));
}

// A 2-D convolution along time only: kernel (k, 1), stride (s, 1), padding (p, 0).
ConvSpec along_time(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t padding) {
  return ConvSpec{ConvKind::kConv2d, in, out, {kernel, 1}, {stride, 1}, {padding, 0}, {1, 1}};
}

// `d` divides every hidden width (config hifigan.discriminator_divisor; jik876's is 1).
std::vector<ConvSpec> period_layers(int64_t d) {
  // jik876's kernel 5, stride 3, padding get_padding(5, 1) = 2.
  return {along_time(1, 32 / d, 5, 3, 2), along_time(32 / d, 128 / d, 5, 3, 2),
          along_time(128 / d, 512 / d, 5, 3, 2), along_time(512 / d, 1024 / d, 5, 3, 2),
          along_time(1024 / d, 1024 / d, 5, 1, 2)};
}

std::vector<ConvSpec> scale_layers(int64_t d) {
  return {conv1d(1, 128 / d, 15, 1, 7),
          conv1d(128 / d, 128 / d, 41, 2, 20, 1, 4),
          conv1d(128 / d, 256 / d, 41, 2, 20, 1, 16),
          conv1d(256 / d, 512 / d, 41, 4, 20, 1, 16),
          conv1d(512 / d, 1024 / d, 41, 4, 20, 1, 16),
          conv1d(1024 / d, 1024 / d, 41, 1, 20, 1, 16),
          conv1d(1024 / d, 1024 / d, 5, 1, 2)};
}

void check_waveforms(const torch::Tensor& y, const torch::Tensor& y_hat, const char* who) {
  TTS_CHECK(y.dim() == 3 && y.size(1) == 1 && y.sizes() == y_hat.sizes(),
            "{}: expected y and y_hat of one shape [batch, 1, samples], found {} and {}", who,
            y.sizes().vec(), y_hat.sizes().vec());
}

template <class Discriminators>
torch::nn::ModuleList register_discriminators(torch::nn::Module& parent,
                                              const Discriminators& discriminators) {
  torch::nn::ModuleList list;
  for (const auto& d : discriminators) list->push_back(d);
  return parent.register_module("discriminators", list);
}

void add_scores(DiscriminatorScores& scores, SubDiscriminator& d, const torch::Tensor& y,
                const torch::Tensor& y_hat) {
  auto [real, real_features] = d->forward(y);
  auto [fake, fake_features] = d->forward(y_hat);
  scores.real.push_back(real);
  scores.fake.push_back(fake);
  scores.real_features.push_back(std::move(real_features));
  scores.fake_features.push_back(std::move(fake_features));
}

}  // namespace

SubDiscriminatorImpl::SubDiscriminatorImpl(int64_t period, WeightNorm norm, int64_t divisor)
    : period_(period) {
  TTS_CHECK(divisor == 1 || divisor == 2 || divisor == 4 || divisor == 8,
            "hifigan: discriminator width divisor {} is not 1, 2, 4 or 8", divisor);
  torch::nn::ModuleList list;
  for (const ConvSpec& spec : period > 0 ? period_layers(divisor) : scale_layers(divisor)) {
    convs_.emplace_back(spec, norm);
    list->push_back(convs_.back());
  }
  register_module("convs", list);
  conv_post_ =
      register_module("conv_post", NormConv(period > 0 ? along_time(1024 / divisor, 1, 3, 1, 1)
                                                       : conv1d(1024 / divisor, 1, 3, 1, 1),
                                            norm));
}

std::pair<torch::Tensor, std::vector<torch::Tensor>> SubDiscriminatorImpl::forward(
    torch::Tensor x) {
  if (period_ > 0) {
    const int64_t t = x.size(2);
    if (t % period_ != 0) {
      x = F::pad(x, F::PadFuncOptions({0, period_ - t % period_}).mode(torch::kReflect));
    }
    x = x.view({x.size(0), x.size(1), x.size(2) / period_, period_});
  }
  std::vector<torch::Tensor> features;
  for (NormConv& conv : convs_) {
    x = leaky(conv->forward(x));
    features.push_back(x);
  }
  x = conv_post_->forward(x);
  features.push_back(x);
  return {torch::flatten(x, 1, -1), std::move(features)};
}

MultiPeriodDiscriminatorImpl::MultiPeriodDiscriminatorImpl(int64_t divisor) {
  for (int64_t period : kPeriods) {
    discriminators_.emplace_back(period, WeightNorm::kWeight, divisor);
  }
  register_discriminators(*this, discriminators_);
}

DiscriminatorScores MultiPeriodDiscriminatorImpl::forward(const torch::Tensor& y,
                                                          const torch::Tensor& y_hat) {
  check_waveforms(y, y_hat, "hifigan::MultiPeriodDiscriminator");
  DiscriminatorScores scores;
  for (SubDiscriminator& d : discriminators_) add_scores(scores, d, y, y_hat);
  return scores;
}

MultiScaleDiscriminatorImpl::MultiScaleDiscriminatorImpl(int64_t divisor) {
  discriminators_.emplace_back(0, WeightNorm::kSpectral, divisor);
  discriminators_.emplace_back(0, WeightNorm::kWeight, divisor);
  discriminators_.emplace_back(0, WeightNorm::kWeight, divisor);
  register_discriminators(*this, discriminators_);
}

DiscriminatorScores MultiScaleDiscriminatorImpl::forward(const torch::Tensor& y,
                                                         const torch::Tensor& y_hat) {
  check_waveforms(y, y_hat, "hifigan::MultiScaleDiscriminator");
  DiscriminatorScores scores;
  torch::Tensor real = y, fake = y_hat;
  for (size_t i = 0; i < discriminators_.size(); ++i) {
    if (i > 0) {
      // jik876's meanpools: AvgPool1d(4, 2, padding=2), padding counted in the mean.
      const auto pool = F::AvgPool1dFuncOptions(4).stride(2).padding(2);
      real = F::avg_pool1d(real, pool);
      fake = F::avg_pool1d(fake, pool);
    }
    add_scores(scores, discriminators_[i], real, fake);
  }
  return scores;
}

}  // namespace tts::hifigan
