#include "tts/models/wavenet/layers/mixture.h"

#include <torch/torch.h>

#include <cmath>

#include "tts/core/error.h"

namespace tts::wavenet {
namespace F = torch::nn::functional;
namespace {

// log(sum(exp(x))) over the last dimension, as r9y9's log_sum_exp (max taken out first).
torch::Tensor log_sum_exp(const torch::Tensor& x) {
  torch::Tensor m = std::get<0>(x.max(-1, /*keepdim=*/true));
  return m.squeeze(-1) + torch::log(torch::exp(x - m).sum(-1));
}

void check_shapes(const torch::Tensor& y_hat, const torch::Tensor& y, const char* what) {
  TTS_CHECK(
      y_hat.dim() == 3 && y.dim() == 2 && y.size(0) == y_hat.size(0) && y.size(1) == y_hat.size(2),
      "{}: expected parameters [B, C, T] and targets [B, T], found {} and {}", what, y_hat.sizes(),
      y.sizes());
}

// A component per row of logits [B, K] by the Gumbel-max trick, as r9y9 draws it.
torch::Tensor pick_component(const torch::Tensor& logits, at::Generator& generator) {
  torch::Tensor u = torch::empty(logits.sizes(), torch::kFloat)
                        .uniform_(1e-5, 1.0 - 1e-5, generator)
                        .to(logits.device());
  return std::get<1>((logits - torch::log(-torch::log(u))).max(-1, /*keepdim=*/true));
}

}  // namespace

torch::Tensor discretized_mix_logistic_nll(const torch::Tensor& y_hat, const torch::Tensor& y,
                                           int64_t num_classes, double log_scale_min) {
  check_shapes(y_hat, y, "discretized_mix_logistic_nll");
  TTS_CHECK(y_hat.size(1) % 3 == 0,
            "discretized_mix_logistic_nll: {} channels are not 3 per "
            "component (logit, mean, log scale)",
            y_hat.size(1));
  const int64_t k = y_hat.size(1) / 3;
  torch::Tensor p = y_hat.transpose(1, 2);  // [B, T, 3K]
  torch::Tensor logit_probs = p.narrow(2, 0, k);
  torch::Tensor means = p.narrow(2, k, k);
  torch::Tensor log_scales = torch::clamp_min(p.narrow(2, 2 * k, k), log_scale_min);
  torch::Tensor target = y.unsqueeze(-1).expand_as(means);

  const double half_bin = 1.0 / static_cast<double>(num_classes - 1);
  torch::Tensor centered = target - means;
  torch::Tensor inv_stdv = torch::exp(-log_scales);
  torch::Tensor plus_in = inv_stdv * (centered + half_bin);
  torch::Tensor min_in = inv_stdv * (centered - half_bin);
  torch::Tensor cdf_delta = torch::sigmoid(plus_in) - torch::sigmoid(min_in);
  // The edge bins take the whole tail below -1 / above 1.
  torch::Tensor log_cdf_plus = plus_in - F::softplus(plus_in);
  torch::Tensor log_one_minus_cdf_min = -F::softplus(min_in);
  torch::Tensor mid_in = inv_stdv * centered;
  torch::Tensor log_pdf_mid = mid_in - log_scales - 2.0 * F::softplus(mid_in);
  // Where the bin's mass underflows, the density at its centre times its width (r9y9's choice of
  // threshold and width, kept for equal losses).
  torch::Tensor inner_inner_cond = (cdf_delta > 1e-5).to(torch::kFloat);
  torch::Tensor inner_inner_out =
      inner_inner_cond * torch::log(torch::clamp_min(cdf_delta, 1e-12)) +
      (1.0 - inner_inner_cond) *
          (log_pdf_mid - std::log(static_cast<double>(num_classes - 1) / 2.0));
  torch::Tensor inner_cond = (target > 0.999).to(torch::kFloat);
  torch::Tensor inner_out =
      inner_cond * log_one_minus_cdf_min + (1.0 - inner_cond) * inner_inner_out;
  torch::Tensor cond = (target < -0.999).to(torch::kFloat);
  torch::Tensor log_probs = cond * log_cdf_plus + (1.0 - cond) * inner_out;
  return -log_sum_exp(log_probs + F::log_softmax(logit_probs, -1));
}

torch::Tensor mix_gaussian_nll(const torch::Tensor& y_hat, const torch::Tensor& y,
                               double log_scale_min) {
  check_shapes(y_hat, y, "mix_gaussian_nll");
  const int64_t c = y_hat.size(1);
  TTS_CHECK(c == 2 || c % 3 == 0,
            "mix_gaussian_nll: expected 2 channels (mean, log scale) or 3 per component, found {}",
            c);
  const int64_t k = c == 2 ? 1 : c / 3;
  torch::Tensor p = y_hat.transpose(1, 2);
  torch::Tensor means = c == 2 ? p.narrow(2, 0, 1) : p.narrow(2, k, k);
  torch::Tensor log_scales =
      torch::clamp_min(c == 2 ? p.narrow(2, 1, 1) : p.narrow(2, 2 * k, k), log_scale_min);
  torch::Tensor centered = y.unsqueeze(-1).expand_as(means) - means;
  // torch.distributions.Normal(0, exp(log_scales)).log_prob, term by term.
  torch::Tensor scale = torch::exp(log_scales);
  torch::Tensor log_probs = -(centered * centered) / (2.0 * scale * scale) - torch::log(scale) -
                            std::log(std::sqrt(2.0 * M_PI));
  if (k == 1) return -log_probs.squeeze(-1);
  return -log_sum_exp(log_probs + F::log_softmax(p.narrow(2, 0, k), -1));
}

torch::Tensor mixture_loss(const torch::Tensor& y_hat, const torch::Tensor& y,
                           const config::WavenetOptions& options, const torch::Tensor& mask) {
  torch::Tensor nll =
      options.output_distribution == config::WavenetOutput::kLogistic
          ? discretized_mix_logistic_nll(y_hat, y, options.quantize_channels, options.log_scale_min)
          : mix_gaussian_nll(y_hat, y, options.log_scale_min);
  if (!mask.defined()) return nll.mean();
  TTS_CHECK(mask.sizes() == nll.sizes(), "mixture_loss: expected a mask {}, found {}", nll.sizes(),
            mask.sizes());
  torch::Tensor weights = mask.to(nll.scalar_type());
  return (nll * weights).sum() / weights.sum().clamp_min(1.0);
}

torch::Tensor teacher_forced_loss(const torch::Tensor& y_hat, const torch::Tensor& x,
                                  const config::WavenetOptions& options) {
  TTS_CHECK(x.dim() == 3 && x.size(1) == 1 && y_hat.dim() == 3 && y_hat.size(0) == x.size(0) &&
                y_hat.size(2) == x.size(2) && x.size(2) >= 2,
            "teacher_forced_loss: expected output [B, C, T] and input [B, 1, T], T >= 2; found "
            "{} and {}",
            y_hat.sizes(), x.sizes());
  const int64_t t = x.size(2) - 1;
  return mixture_loss(y_hat.narrow(2, 0, t), x.squeeze(1).narrow(1, 1, t), options);
}

torch::Tensor sample_mixture(const torch::Tensor& params, config::WavenetOutput output,
                             at::Generator& generator) {
  TTS_CHECK(params.dim() == 2, "sample_mixture: expected parameters [B, C], found {}",
            params.sizes());
  const int64_t b = params.size(0);
  const int64_t c = params.size(1);
  auto uniform = [&](int64_t n) {
    return torch::empty({n}, torch::kFloat)
        .uniform_(1e-5, 1.0 - 1e-5, generator)
        .to(params.device());
  };
  torch::Tensor means;
  torch::Tensor log_scales;
  if (output == config::WavenetOutput::kNormal && c <= 3) {
    // One Gaussian: [mean, log scale], or [unused logit, mean, log scale].
    means = params.select(1, c - 2);
    log_scales = params.select(1, c - 1);
  } else {
    TTS_CHECK(c % 3 == 0, "sample_mixture: {} channels are not 3 per component", c);
    const int64_t k = c / 3;
    torch::Tensor pick = pick_component(params.narrow(1, 0, k), generator);
    means = params.narrow(1, k, k).gather(1, pick).squeeze(1);
    log_scales = params.narrow(1, 2 * k, k).gather(1, pick).squeeze(1);
  }
  torch::Tensor x;
  if (output == config::WavenetOutput::kLogistic) {
    torch::Tensor u = uniform(b);
    x = means + torch::exp(log_scales) * (torch::log(u) - torch::log(1.0 - u));
  } else {
    torch::Tensor noise = torch::empty({b}, torch::kFloat).normal_(0.0, 1.0, generator);
    x = means + torch::exp(log_scales) * noise.to(params.device());
  }
  return torch::clamp(x, -1.0, 1.0);
}

}  // namespace tts::wavenet
