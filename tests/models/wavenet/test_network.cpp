// The WaveNet against r9y9/wavenet_vocoder's own outputs: the teacher-forced forward, the loss,
// and the incremental path fed the same inputs; generation's determinism and batching.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "tts/core/error.h"
#include "tts/models/wavenet/layers/mixture.h"
#include "tts/models/wavenet/speaking/generate.h"
#include "wavenet_fixture.h"

namespace fx = wavenet_fixture;
using namespace tts::wavenet;

namespace {

class EveryFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryFixture, TeacherForcedOutputMatchesR9y9) {
  fx::Fixture f = fx::load(GetParam());
  torch::NoGradGuard no_grad;
  torch::Tensor y_hat = f.model->forward(f.x, f.c, f.g);
  ASSERT_EQ(y_hat.sizes(), f.y_hat.sizes());
  EXPECT_LE(fx::max_abs(y_hat, f.y_hat), 1e-5);
}

TEST_P(EveryFixture, LossIsR9y9SumPerSample) {
  fx::Fixture f = fx::load(GetParam());
  torch::NoGradGuard no_grad;
  const double samples = static_cast<double>(f.x.size(0) * (f.x.size(2) - 1));
  // On r9y9's own output, so only the loss is compared.
  const double ours =
      teacher_forced_loss(f.y_hat, f.x, f.imported.wavenet).item<double>() * samples;
  EXPECT_NEAR(ours, f.loss, 1e-6 * std::abs(f.loss));
}

TEST_P(EveryFixture, IncrementalPathEqualsTeacherForcedForward) {
  fx::Fixture f = fx::load(GetParam());
  torch::NoGradGuard no_grad;
  torch::Tensor forward = f.model->forward(f.x, f.c, f.g);
  torch::Tensor incremental = incremental_logits(f.model, f.c, f.x, f.g);
  ASSERT_EQ(incremental.sizes(), forward.sizes());
  EXPECT_LE(fx::max_abs(incremental, forward), 1e-5);
}

TEST_P(EveryFixture, GenerationIsSeededAndBatched) {
  fx::Fixture f = fx::load(GetParam());
  const int64_t frames = 3;
  torch::Tensor mel = f.c.narrow(2, 0, frames + 2 * f.imported.wavenet.cin_pad);
  torch::Tensor audio = generate(f.model, mel, 11, f.g);
  ASSERT_EQ(audio.sizes(), (torch::IntArrayRef{f.x.size(0), frames * f.model->hop()}));
  EXPECT_TRUE(audio.abs().le(1).all().item<bool>());
  EXPECT_TRUE(torch::equal(audio, generate(f.model, mel, 11, f.g)));
  EXPECT_FALSE(torch::equal(audio, generate(f.model, mel, 12, f.g)));
  // Free-running samples are what the teacher-forced forward makes of them: the step that drew
  // sample t saw the samples before it.
  torch::Tensor inputs =
      torch::cat({torch::zeros({audio.size(0), 1}), audio.narrow(1, 0, audio.size(1) - 1)}, 1)
          .unsqueeze(1);
  torch::NoGradGuard no_grad;
  EXPECT_LE(fx::max_abs(incremental_logits(f.model, mel, inputs, f.g),
                        f.model->forward(inputs, mel, f.g)),
            1e-5);
}

INSTANTIATE_TEST_SUITE_P(Wavenet, EveryFixture, ::testing::ValuesIn(fx::names()));

TEST(Wavenet, GenerationRefusesTrainingModeAndMisfitMels) {
  fx::Fixture f = fx::load("wavenet");
  f.model->train();
  EXPECT_THROW(generate(f.model, f.c, 1), tts::Error);
  f.model->eval();
  EXPECT_THROW(generate(f.model, f.c.narrow(1, 0, 10), 1), tts::Error);
}

TEST(Wavenet, TrainingUpdatesWeightNormParametersAndAppliesDropout) {
  fx::Fixture f = fx::load("wavenet_logistic");
  f.model->train();
  torch::Tensor loss = teacher_forced_loss(f.model->forward(f.x, f.c), f.x, f.imported.wavenet);
  loss.backward();
  // The last layer's residual output feeds nothing, in r9y9's network as in ours.
  const std::string unused =
      "conv_layers." + std::to_string(f.imported.wavenet.layers - 1) + ".conv1x1_out.";
  for (const auto& p : f.model->named_parameters()) {
    if (p.key().rfind(unused, 0) == 0) continue;
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
    EXPECT_GT(p.value().grad().abs().sum().item<double>(), 0) << p.key();
  }
  tts::config::WavenetOptions dropout = f.imported.wavenet;
  dropout.dropout = 0.5;
  WaveNet model(dropout, f.imported.audio.n_mels);
  load_wavenet_state_dict(*model, f.imported.tensors, "fixture");
  torch::NoGradGuard no_grad;
  model->eval();
  torch::Tensor eval = model->forward(f.x, f.c);
  EXPECT_LE(fx::max_abs(eval, f.y_hat), 1e-5);
  model->train();
  EXPECT_GT(fx::max_abs(model->forward(f.x, f.c), eval), 1e-3);
}

TEST(Wavenet, MaskedLossAveragesOverValidSamples) {
  fx::Fixture f = fx::load("wavenet");
  torch::Tensor y_hat = f.y_hat.narrow(2, 0, 100);
  torch::Tensor y = f.x.squeeze(1).narrow(1, 1, 100);
  torch::Tensor mask = torch::ones({y.size(0), 100});
  mask[0].narrow(0, 60, 40).zero_();
  torch::Tensor nll = discretized_mix_logistic_nll(y_hat, y, 65536, -9.0);
  EXPECT_NEAR(mixture_loss(y_hat, y, f.imported.wavenet, mask).item<double>(),
              ((nll * mask).sum() / mask.sum()).item<double>(), 1e-6);
}

}  // namespace
