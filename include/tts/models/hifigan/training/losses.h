// HiFi-GAN's adversarial losses (least squares GAN) and feature-matching loss, as
// jik876/hifi-gan's models.py sums and averages them: per sub-discriminator a mean, summed over
// the sub-discriminators (and, for features, over the layers).
#pragma once

#include <torch/torch.h>

#include <vector>

namespace tts::hifigan {

// Sum over sub-discriminators of mean((1 - real)^2) + mean(fake^2).
torch::Tensor discriminator_loss(const std::vector<torch::Tensor>& real,
                                 const std::vector<torch::Tensor>& fake);

// Sum over sub-discriminators of mean((1 - fake)^2).
torch::Tensor generator_loss(const std::vector<torch::Tensor>& fake);

// 2 x the sum over sub-discriminators and layers of mean(|real - fake|) (jik876's factor 2).
torch::Tensor feature_loss(const std::vector<std::vector<torch::Tensor>>& real,
                           const std::vector<std::vector<torch::Tensor>>& fake);

}  // namespace tts::hifigan
