// The WaveNet family's module: the moving average starts at the weights, follows r9y9's
// ExponentialMovingAverage.update (shadow -= (1 - decay) * (shadow - w)) and is what synthesis
// reads; no gradient reaches it.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "tts/models/wavenet/family.h"

using tts::wavenet::WavenetTraining;

namespace {

tts::config::WavenetOptions small() {
  tts::config::WavenetOptions o;
  o.layers = 4;
  o.stacks = 2;
  o.residual_channels = 8;
  o.gate_channels = 8;
  o.skip_out_channels = 8;
  o.upsample_scales = {4, 4};
  o.max_time_steps = 64;
  return o;
}

TEST(WavenetFamily, TheAverageStartsAtTheWeightsAndFollowsR9y9sUpdate) {
  torch::manual_seed(3);
  WavenetTraining model(small(), 6);
  auto trained = model->wavenet->named_parameters();
  auto averaged = model->ema->named_parameters();
  ASSERT_EQ(trained.size(), averaged.size());
  std::map<std::string, torch::Tensor> before;
  for (const auto& item : averaged) {
    EXPECT_TRUE(torch::equal(item.value(), trained[item.key()])) << item.key();
    EXPECT_FALSE(item.value().requires_grad()) << item.key();
    before[item.key()] = item.value().clone();
  }
  {
    torch::NoGradGuard no_grad;
    for (auto& item : trained) item.value().add_(torch::randn_like(item.value()));
  }
  const double decay = 0.9;
  model->update_average(decay);
  for (const auto& item : averaged) {
    torch::Tensor shadow = before[item.key()];
    torch::Tensor expected = shadow - (1.0 - decay) * (shadow - trained[item.key()]);
    EXPECT_TRUE(torch::allclose(item.value(), expected, 1e-6, 1e-7)) << item.key();
  }
  EXPECT_EQ(model->synthesis_network().get(), model->ema.get());
}

TEST(WavenetFamily, WithoutAnAverageSynthesisUsesTheTrainedWeights) {
  tts::config::WavenetOptions options = small();
  options.exponential_moving_average = false;
  WavenetTraining model(options, 6);
  EXPECT_FALSE(model->ema);
  model->update_average(0.5);  // nothing to do
  EXPECT_EQ(model->synthesis_network().get(), model->wavenet.get());
  for (const auto& item : model->named_parameters()) {
    EXPECT_EQ(item.key().rfind("wavenet.", 0), 0u) << item.key();
  }
}

}  // namespace
