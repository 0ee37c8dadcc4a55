#include "tts/models/hifigan/training/losses.h"

#include "tts/core/error.h"

namespace tts::hifigan {
namespace {

void check_pairs(size_t real, size_t fake, const char* who) {
  TTS_CHECK(real == fake && real > 0,
            "hifigan::{}: expected as many real as fake outputs (at least one), found {} and {}",
            who, real, fake);
}

}  // namespace

torch::Tensor discriminator_loss(const std::vector<torch::Tensor>& real,
                                 const std::vector<torch::Tensor>& fake) {
  check_pairs(real.size(), fake.size(), "discriminator_loss");
  torch::Tensor loss;
  for (size_t i = 0; i < real.size(); ++i) {
    torch::Tensor term =
        torch::mean(torch::pow(1 - real[i], 2)) + torch::mean(torch::pow(fake[i], 2));
    loss = loss.defined() ? loss + term : term;
  }
  return loss;
}

torch::Tensor generator_loss(const std::vector<torch::Tensor>& fake) {
  check_pairs(fake.size(), fake.size(), "generator_loss");
  torch::Tensor loss;
  for (const torch::Tensor& score : fake) {
    torch::Tensor term = torch::mean(torch::pow(1 - score, 2));
    loss = loss.defined() ? loss + term : term;
  }
  return loss;
}

torch::Tensor feature_loss(const std::vector<std::vector<torch::Tensor>>& real,
                           const std::vector<std::vector<torch::Tensor>>& fake) {
  check_pairs(real.size(), fake.size(), "feature_loss");
  torch::Tensor loss;
  for (size_t i = 0; i < real.size(); ++i) {
    check_pairs(real[i].size(), fake[i].size(), "feature_loss");
    for (size_t j = 0; j < real[i].size(); ++j) {
      torch::Tensor term = torch::mean(torch::abs(real[i][j] - fake[i][j]));
      loss = loss.defined() ? loss + term : term;
    }
  }
  return loss * 2;
}

}  // namespace tts::hifigan
