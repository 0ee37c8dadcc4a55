// The WaveNet family's module: the moving average starts at the weights, follows r9y9's
// ExponentialMovingAverage.update (shadow -= (1 - decay) * (shadow - w)) and is what synthesis
// reads; no gradient reaches it.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "tts/models/wavenet/layers/mixture.h"
#include "tts/models/wavenet/training/family.h"

using tts::wavenet::teacher_forced_loss;
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

// A network of three speaker rows trained on windows of speakers 0 and 2: each row's gradient is
// what its own utterance's loss gives it (the batch's mean halves it), the unused row gets none,
// and after a few Adam steps it is still as initialized while the others moved.
TEST(WavenetFamily, EachSpeakerRowLearnsOnlyFromItsOwnUtterances) {
  torch::manual_seed(5);
  tts::config::WavenetOptions options = small();
  options.gin_channels = 4;
  options.n_speakers = 3;
  options.exponential_moving_average = false;
  WavenetTraining model(options, 6);
  model->to(torch::kDouble);  // the rows' sums compared without float32's rounding
  auto& net = model->wavenet;
  const int64_t frames = 4, hop = 16;
  torch::Tensor mel = torch::randn({2, 6, frames + 2 * options.cin_pad}, torch::kDouble);
  torch::Tensor audio = torch::rand({2, 1, frames * hop}, torch::kDouble) - 0.5;
  const torch::Tensor speakers = torch::tensor({0, 2}, torch::kInt64);
  torch::Tensor& rows = net->embed_speakers->weight;

  auto gradient = [&](const torch::Tensor& x, const torch::Tensor& c, const torch::Tensor& g) {
    net->zero_grad();
    teacher_forced_loss(net->forward(x, c, g), x, options).backward();
    return rows.grad().clone();
  };
  const torch::Tensor both = gradient(audio, mel, speakers);
  const torch::Tensor first =
      gradient(audio.narrow(0, 0, 1), mel.narrow(0, 0, 1), speakers.narrow(0, 0, 1));
  const torch::Tensor second =
      gradient(audio.narrow(0, 1, 1), mel.narrow(0, 1, 1), speakers.narrow(0, 1, 1));
  EXPECT_GT(both[0].abs().max().item<double>(), 0.0);
  EXPECT_GT(both[2].abs().max().item<double>(), 0.0);
  EXPECT_EQ(both[1].abs().max().item<double>(), 0.0);
  EXPECT_TRUE(torch::allclose(both[0], first[0] / 2, 1e-9, 1e-12)) << both[0] << first[0] / 2;
  EXPECT_TRUE(torch::allclose(both[2], second[2] / 2, 1e-9, 1e-12)) << both[2] << second[2] / 2;
  EXPECT_EQ(first[2].abs().max().item<double>(), 0.0);  // utterance 0 says nothing of row 2
  EXPECT_EQ(second[0].abs().max().item<double>(), 0.0);

  const torch::Tensor before = rows.detach().clone();
  torch::optim::Adam adam(net->parameters(), torch::optim::AdamOptions(1e-2));
  for (int step = 0; step < 3; ++step) {
    adam.zero_grad();
    teacher_forced_loss(net->forward(audio, mel, speakers), audio, options).backward();
    adam.step();
  }
  EXPECT_TRUE(torch::equal(rows[1], before[1])) << "the unused row moved";
  EXPECT_FALSE(torch::equal(rows[0], before[0]));
  EXPECT_FALSE(torch::equal(rows[2], before[2]));
}

}  // namespace
