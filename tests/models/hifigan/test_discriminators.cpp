// The discriminators, the GAN losses and the mel loss against jik876/hifi-gan's own, on the
// inputs of the step fixture (tests/data/vocoders/step/, make_hifigan_step.py): the first
// discriminator pass of its training step (train mode: the spectral norm iterates once per call),
// the multi-scale discriminator in eval mode, and meldataset.mel_spectrogram.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <string>

#include "../../support/hifigan_fixture.h"
#include "tts/models/hifigan/layers/discriminators.h"
#include "tts/models/hifigan/training/losses.h"
#include "tts/models/hifigan/training/mel_loss.h"

using namespace tts::hifigan;
using tts::test::hifigan::fill_from_formula;
using tts::test::hifigan::StepFixture;

namespace {

double max_diff(const torch::Tensor& a, const torch::Tensor& b) {
  EXPECT_EQ(a.sizes(), b.sizes());
  return (a - b).abs().max().item<double>();
}

void expect_relative(double ours, double theirs, double tolerance, const std::string& what) {
  EXPECT_LE(std::abs(ours - theirs), tolerance * std::max(1.0, std::abs(theirs)))
      << what << ": ours " << ours << ", jik876's " << theirs;
}

void check_pass(const StepFixture& fx, const std::string& tag, const DiscriminatorScores& s) {
  for (const std::string side : {"real", "fake"}) {
    const auto& scores = side == "real" ? s.real : s.fake;
    const auto& features = side == "real" ? s.real_features : s.fake_features;
    for (size_t i = 0; i < scores.size(); ++i) {
      const std::string key = fmt::format("d_scores.{}.{}.{}", tag, side, i);
      EXPECT_LT(max_diff(scores[i], fx.tensor(key)), 1e-5) << key;
      for (size_t j = 0; j < features[i].size(); ++j) {
        const std::string f = fmt::format("d_features.{}.{}.{}.{}", tag, side, i, j);
        const torch::Tensor x = features[i][j].to(torch::kFloat64);
        expect_relative(x.sum().item<double>(), fx.number(f + ".sum"), 1e-4, f + ".sum");
        expect_relative(x.abs().sum().item<double>(), fx.number(f + ".abs"), 1e-5, f + ".abs");
      }
    }
  }
}

}  // namespace

TEST(HifiganDiscriminators, ScoresFeaturesAndLossesMatchJik876) {
  StepFixture fx;
  MultiPeriodDiscriminator mpd;
  MultiScaleDiscriminator msd;
  fill_from_formula(*mpd, "mpd.");
  fill_from_formula(*msd, "msd.");
  const torch::Tensor y = fx.tensor("audio");
  const torch::Tensor y_hat = fx.tensor("y_g_hat");
  torch::NoGradGuard no_grad;

  // Eval mode first, on the initial spectral-norm vectors, as the fixture did before training.
  msd->eval();
  const DiscriminatorScores eval = msd->forward(y.squeeze(1).unsqueeze(1), y.flip(-1));
  ASSERT_EQ(eval.fake.size(), 3u);
  for (size_t i = 0; i < eval.fake.size(); ++i) {
    EXPECT_LT(max_diff(eval.fake[i], fx.tensor(fmt::format("msd_eval_scores.{}", i))), 1e-5);
  }

  msd->train();
  mpd->train();
  const DiscriminatorScores f = mpd->forward(y, y_hat);
  const DiscriminatorScores s = msd->forward(y, y_hat);
  ASSERT_EQ(f.real.size(), 5u);
  ASSERT_EQ(s.real.size(), 3u);
  check_pass(fx, "mpd", f);
  check_pass(fx, "msd", s);
  expect_relative(discriminator_loss(f.real, f.fake).item<double>(), fx.number("loss_disc_f"), 1e-5,
                  "loss_disc_f");
  expect_relative(discriminator_loss(s.real, s.fake).item<double>(), fx.number("loss_disc_s"), 1e-5,
                  "loss_disc_s");
  expect_relative(generator_loss(f.fake).item<double>(), fx.number("check_gen_mpd"), 1e-5,
                  "generator_loss mpd");
  expect_relative(generator_loss(s.fake).item<double>(), fx.number("check_gen_msd"), 1e-5,
                  "generator_loss msd");
  expect_relative(feature_loss(f.real_features, f.fake_features).item<double>(),
                  fx.number("check_fm_mpd"), 1e-5, "feature_loss mpd");
  expect_relative(feature_loss(s.real_features, s.fake_features).item<double>(),
                  fx.number("check_fm_msd"), 1e-5, "feature_loss msd");
}

TEST(HifiganDiscriminators, StateDictKeysAreJik876s) {
  MultiScaleDiscriminator msd;
  const auto params = msd->named_parameters();
  const auto buffers = msd->named_buffers();
  EXPECT_NE(params.find("discriminators.0.convs.0.weight_orig"), nullptr);
  EXPECT_NE(buffers.find("discriminators.0.convs.0.weight_u"), nullptr);
  EXPECT_NE(buffers.find("discriminators.0.conv_post.weight_v"), nullptr);
  EXPECT_NE(params.find("discriminators.2.convs.6.weight_g"), nullptr);
  int64_t count = 0;
  for (const auto& p : msd->parameters()) count += p.numel();
  EXPECT_EQ(count, 29618821);  // jik876's MultiScaleDiscriminator
  MultiPeriodDiscriminator mpd;
  count = 0;
  for (const auto& p : mpd->parameters()) count += p.numel();
  EXPECT_EQ(count, 41105770);  // its MultiPeriodDiscriminator
  EXPECT_NE(mpd->named_parameters().find("discriminators.4.conv_post.weight_v"), nullptr);
}

TEST(HifiganDiscriminators, PowerIterationOnlyInTraining) {
  MultiScaleDiscriminator msd;
  const torch::Tensor u = msd->named_buffers()["discriminators.0.convs.3.weight_u"];
  const torch::Tensor before = u.clone();
  const torch::Tensor y = torch::randn({1, 1, 1024});
  torch::NoGradGuard no_grad;
  msd->eval();
  msd->forward(y, y);
  EXPECT_TRUE(torch::equal(u, before));
  msd->train();
  msd->forward(y, y);
  EXPECT_FALSE(torch::equal(u, before));
}

TEST(HifiganLosses, RefuseUnpairedOutputs) {
  const std::vector<torch::Tensor> one{torch::zeros({1, 3})};
  EXPECT_THROW(discriminator_loss(one, {}), tts::Error);
  EXPECT_THROW(feature_loss({{torch::zeros(2)}}, {}), tts::Error);
}

// Log mels compared as jik876's loss sees them: where the magnitude is near the 1e-5 clamp,
// FFT rounding (~1e-6, which differs between libtorch's FFT back ends: the fixture was made with
// 1.13, 2.11 differs by 3e-3 in the log there with jik876's own code) is amplified by the log; so
// the log is compared where the reference mel is above 1e-3, and the magnitudes everywhere.
namespace {

void expect_mel_equal(const torch::Tensor& ours, const torch::Tensor& reference,
                      const std::string& what) {
  ASSERT_EQ(ours.sizes(), reference.sizes()) << what;
  const torch::Tensor above_floor = reference > std::log(1e-3);
  ASSERT_GT(above_floor.sum().item<int64_t>(), 0) << what;
  EXPECT_LT(max_diff(ours.masked_select(above_floor), reference.masked_select(above_floor)), 1e-5)
      << what;
  EXPECT_LT(max_diff(ours.exp(), reference.exp()), 1e-5) << what;
}

}  // namespace

TEST(HifiganMelLoss, MatchesJik876MelSpectrogram) {
  StepFixture fx;
  tts::config::AudioOptions v1;  // config_v1's audio: 22050 Hz, 1024 / 256 / 1024, 80 mels
  const torch::Tensor wave = fx.tensor("mel_v1.audio");
  expect_mel_equal(LossMel(v1, 8000, torch::kCPU)(wave), fx.tensor("mel_v1.fmax_8000"), "v1 8000");
  expect_mel_equal(LossMel(v1, 0, torch::kCPU)(wave), fx.tensor("mel_v1.fmax_none"), "v1 none");
  // The fixture's small setup: its input mels (fmax) and loss targets (fmax_for_loss null).
  const tts::config::Config& config = fx.config();
  const torch::Tensor audio = fx.tensor("audio").squeeze(1);
  expect_mel_equal(LossMel(config.audio, config.audio.fmax, torch::kCPU)(audio), fx.tensor("mel"),
                   "small, input mel");
  expect_mel_equal(LossMel(config.audio, config.hifigan.fmax_for_loss, torch::kCPU)(audio),
                   fx.tensor("y_mel"), "small, loss mel");
}

TEST(HifiganMelLoss, IsDifferentiable) {
  tts::config::AudioOptions audio;
  const torch::Tensor x = (0.1 * torch::randn({2, 4096})).requires_grad_(true);
  LossMel(audio, 0, torch::kCPU)(x).sum().backward();
  ASSERT_TRUE(x.grad().defined());
  EXPECT_TRUE(torch::isfinite(x.grad()).all().item<bool>());
  EXPECT_GT(x.grad().abs().sum().item<double>(), 0);
}
