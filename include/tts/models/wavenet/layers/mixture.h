// The WaveNet's output distributions, as r9y9/wavenet_vocoder's mixture.py defines them (our own
// code): a discretized mixture of logistics (PixelCNN++), or a mixture of continuous Gaussians
// (one Gaussian with 2 channels). Parameters [.., C, ..] are laid out as r9y9's: C = 3K holds K
// mixture logits, K means, K log scales; a single Gaussian C = 2 holds mean, log scale.
#pragma once

#include <ATen/core/Generator.h>
#include <torch/types.h>

#include "tts/models/wavenet/options.h"

namespace tts::wavenet {

// Negative log-likelihood [B, T] of targets y [B, T] in [-1, 1] under the discretized mixture of
// logistics y_hat [B, 3K, T] with `num_classes` levels (r9y9's discretized_mix_logistic_loss
// with reduce=False, log scales clamped below at log_scale_min).
torch::Tensor discretized_mix_logistic_nll(const torch::Tensor& y_hat, const torch::Tensor& y,
                                           int64_t num_classes, double log_scale_min);

// Negative log-density [B, T] of y [B, T] under the Gaussian mixture y_hat [B, C, T], C = 2 or 3K
// (r9y9's mix_gaussian_loss with reduce=False).
torch::Tensor mix_gaussian_nll(const torch::Tensor& y_hat, const torch::Tensor& y,
                               double log_scale_min);

// The training loss: the MEAN negative log-likelihood per predicted sample (over the positions
// where `mask` [B, T] is nonzero; all when undefined) of y [B, T] under y_hat [B, C, T], by
// options.output_distribution (Logistic: num_classes = quantize_channels). r9y9's reduce=True
// loss is the SUM: ours times the number of samples (B*T unmasked) is r9y9's value.
torch::Tensor mixture_loss(const torch::Tensor& y_hat, const torch::Tensor& y,
                           const config::WavenetOptions& options, const torch::Tensor& mask = {});

// mixture_loss of the network's teacher-forced output y_hat [B, C, T] for its input x [B, 1, T]:
// column t predicts sample t+1, so y_hat[.., :-1] is scored against x[.., 1:] (B*(T-1) samples).
torch::Tensor teacher_forced_loss(const torch::Tensor& y_hat, const torch::Tensor& x,
                                  const config::WavenetOptions& options);

// One sample [B] in [-1, 1] per row of the distribution parameters [B, C], as r9y9's
// sample_from_discretized_mix_logistic / sample_from_mix_gaussian draw it (a component by the
// Gumbel-max trick over uniforms in [1e-5, 1 - 1e-5], then a logistic by inverse CDF or a
// Gaussian; log scales not clamped, as r9y9's incremental_forward calls them). The random numbers
// come from `generator`, a CPU generator, whatever the device of `params`.
torch::Tensor sample_mixture(const torch::Tensor& params, config::WavenetOutput output,
                             at::Generator& generator);

}  // namespace tts::wavenet
