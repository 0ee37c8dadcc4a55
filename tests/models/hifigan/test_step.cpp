// One full training step built from the HiFi-GAN modules and torch::optim::AdamW, in the order of
// jik876/hifi-gan's train.py loop, against that loop run once by make_hifigan_step.py
// (tests/data/vocoders/step/): every loss term, every updated generator tensor, the
// discriminators' updates (per-tensor sums and samples) and the spectral-norm buffers.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "../../support/hifigan_fixture.h"
#include "tts/models/hifigan/layers/discriminators.h"
#include "tts/models/hifigan/layers/generator.h"
#include "tts/models/hifigan/training/losses.h"
#include "tts/models/hifigan/training/mel_loss.h"

using namespace tts::hifigan;
using tts::test::hifigan::fill_from_formula;
using tts::test::hifigan::StepFixture;

namespace {

// jik876's weight of the mel loss in loss_gen_all.
constexpr double kMelWeight = 45;

torch::optim::AdamW adamw(std::vector<torch::Tensor> params, const tts::config::TrainOptions& t) {
  return torch::optim::AdamW(std::move(params), torch::optim::AdamWOptions(t.learning_rate)
                                                    .betas({t.adam_beta1, t.adam_beta2})
                                                    .eps(t.adam_eps)
                                                    .weight_decay(t.weight_decay));
}

void expect_loss(double ours, double theirs, const char* name) {
  EXPECT_LE(std::abs(ours - theirs), 1e-5 * std::abs(theirs))
      << name << ": ours " << ours << ", jik876's " << theirs;
}

// The discriminator tensors after the step against the fixture's summaries. A weight moves by
// about lr on Adam's first step whatever its gradient's size, so a gradient that differs only in
// rounding changes nothing but the rare element whose gradient is itself at rounding level.
void check_discriminator(torch::nn::Module& module,
                         const std::map<std::string, torch::Tensor>& before, const StepFixture& fx,
                         const std::string& prefix, double lr) {
  for (const auto& item : module.named_parameters()) {
    const std::string key = prefix + ".after." + item.key();
    const torch::Tensor after = item.value().detach();
    const torch::Tensor delta =
        after.to(torch::kFloat64) - before.at(item.key()).to(torch::kFloat64);
    const double numel = static_cast<double>(after.numel());
    EXPECT_NEAR(delta.sum().item<double>(), fx.number(key + ".delta_sum"), 1e-4 * lr * numel + 1e-9)
        << key;
    EXPECT_NEAR(delta.abs().sum().item<double>(), fx.number(key + ".delta_abs"),
                1e-4 * lr * numel + 1e-9)
        << key;
    const torch::Tensor flat = after.reshape(-1);
    const torch::Tensor samples = fx.tensor(key + ".samples");
    for (int64_t j = 0; j < 32; ++j) {
      EXPECT_NEAR(flat[j * flat.numel() / 32].item<double>(), samples[j].item<double>(), 1e-5)
          << key << " sample " << j;
    }
  }
  for (const auto& item : module.named_buffers()) {
    const torch::Tensor expected = fx.tensor(prefix + ".after." + item.key());
    EXPECT_LT((item.value() - expected).abs().max().item<double>(), 1e-5) << item.key();
  }
}

std::map<std::string, torch::Tensor> snapshot(torch::nn::Module& module) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& p : module.named_parameters()) out[p.key()] = p.value().detach().clone();
  return out;
}

}  // namespace

TEST(HifiganStep, OneTrainingStepMatchesJik876) {
  StepFixture fx;
  const tts::config::Config& config = fx.config();
  Generator generator(config.hifigan, config.audio.n_mels);
  MultiPeriodDiscriminator mpd;
  MultiScaleDiscriminator msd;
  fill_from_formula(*generator, "generator.");
  fill_from_formula(*mpd, "mpd.");
  fill_from_formula(*msd, "msd.");
  for (const auto& p : generator->named_parameters()) {
    ASSERT_TRUE(torch::equal(p.value(), fx.tensor("generator.before." + p.key()))) << p.key();
  }
  const auto mpd_before = snapshot(*mpd);
  const auto msd_before = snapshot(*msd);

  auto optim_g = adamw(generator->parameters(), config.train);
  std::vector<torch::Tensor> d_params = msd->parameters();
  for (const auto& p : mpd->parameters()) d_params.push_back(p);
  auto optim_d = adamw(d_params, config.train);
  const LossMel mel_of(config.audio, config.hifigan.fmax_for_loss, torch::kCPU);
  generator->train();
  mpd->train();
  msd->train();

  const torch::Tensor x = fx.tensor("mel");
  const torch::Tensor y = fx.tensor("audio");
  const torch::Tensor y_mel = fx.tensor("y_mel");
  const torch::Tensor y_g_hat = generator->forward(x);
  const torch::Tensor y_g_hat_mel = mel_of(y_g_hat.squeeze(1));

  optim_d.zero_grad();
  const DiscriminatorScores df = mpd->forward(y, y_g_hat.detach());
  const torch::Tensor loss_disc_f = discriminator_loss(df.real, df.fake);
  const DiscriminatorScores ds = msd->forward(y, y_g_hat.detach());
  const torch::Tensor loss_disc_s = discriminator_loss(ds.real, ds.fake);
  const torch::Tensor loss_disc_all = loss_disc_s + loss_disc_f;
  loss_disc_all.backward();
  optim_d.step();

  optim_g.zero_grad();
  const torch::Tensor loss_mel = torch::l1_loss(y_mel, y_g_hat_mel) * kMelWeight;
  const DiscriminatorScores gf = mpd->forward(y, y_g_hat);
  const DiscriminatorScores gs = msd->forward(y, y_g_hat);
  const torch::Tensor loss_fm_f = feature_loss(gf.real_features, gf.fake_features);
  const torch::Tensor loss_fm_s = feature_loss(gs.real_features, gs.fake_features);
  const torch::Tensor loss_gen_f = generator_loss(gf.fake);
  const torch::Tensor loss_gen_s = generator_loss(gs.fake);
  const torch::Tensor loss_gen_all = loss_gen_s + loss_gen_f + loss_fm_s + loss_fm_f + loss_mel;
  loss_gen_all.backward();
  optim_g.step();

  for (const auto& [name, value] :
       std::vector<std::pair<const char*, torch::Tensor>>{{"loss_disc_f", loss_disc_f},
                                                          {"loss_disc_s", loss_disc_s},
                                                          {"loss_disc_all", loss_disc_all},
                                                          {"loss_mel", loss_mel},
                                                          {"loss_fm_f", loss_fm_f},
                                                          {"loss_fm_s", loss_fm_s},
                                                          {"loss_gen_f", loss_gen_f},
                                                          {"loss_gen_s", loss_gen_s},
                                                          {"loss_gen_all", loss_gen_all}}) {
    expect_loss(value.item<double>(), fx.number(name), name);
  }
  EXPECT_LT((y_g_hat - fx.tensor("y_g_hat")).abs().max().item<double>(), 1e-5);
  for (const auto& p : generator->named_parameters()) {
    const torch::Tensor expected = fx.tensor("generator.after." + p.key());
    EXPECT_LT((p.value() - expected).abs().max().item<double>(), 1e-5) << p.key();
  }
  check_discriminator(*mpd, mpd_before, fx, "mpd", config.train.learning_rate);
  check_discriminator(*msd, msd_before, fx, "msd", config.train.learning_rate);
}
