// A batch padded up to a length bucket (train.length_buckets) trains as the same batch padded to
// its longest: the same losses and gradients. Padding is invisible to the model by construction
// (Note [Exact global batch], forward.h: frame losses are means over real frames; attention is
// masked by text length; BatchNorm and the keyed dropout masks see only real positions), but the
// arithmetic over a longer padded axis may round differently: these tests say which holds.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "small_options.h"
#include "tts/config/config.h"
#include "tts/data/batch.h"
#include "tts/dist/communicator.h"
#include "tts/models/keyed_dropout.h"
#include "tts/models/tacotron2/layers/network.h"
#include "tts/models/tacotron2/training/teacher_forced.h"

namespace {

constexpr int64_t kSymbols = 40;

std::vector<tts::data::Example> examples(int n_mels) {
  torch::manual_seed(7);
  std::vector<tts::data::Example> out;
  const std::vector<std::pair<int64_t, int64_t>> sizes = {{9, 23}, {14, 31}, {6, 12}, {11, 27}};
  for (size_t i = 0; i < sizes.size(); ++i) {
    tts::data::Example e;
    e.id = "utt" + std::to_string(i);
    for (int64_t j = 0; j < sizes[i].first; ++j) e.text.push_back(1 + (j * 7 + i * 3) % 37);
    e.mel = torch::randn({sizes[i].second, n_mels});
    out.push_back(std::move(e));
  }
  return out;
}

struct Result {
  std::vector<double> losses;  // total, mel, mel_postnet, gate, guided_attention
  std::vector<torch::Tensor> gradients;
};

Result train_once(const tts::config::Config& config, int r, tts::data::Batch batch,
                  tts::dist::Communicator& comm) {
  torch::manual_seed(1234);
  tts::tacotron2::Tacotron2 model = tts::tacotron2::build_model(config, kSymbols, r);
  model->train();
  batch.global_real_frames = batch.real_frame_count;
  batch.global_attention_pairs = batch.attention_pair_count;
  const tts::models::KeyedDropout dropout(static_cast<uint64_t>(config.train.seed), 1, batch.ids);
  tts::tacotron2::TacotronOutput output;
  tts::tacotron2::LossParts parts = tts::tacotron2::forward_loss(
      *model, batch, config.train, &output,
      tts::tacotron2::training_context(batch, dropout, config.train, comm));
  tts::tacotron2::training_loss(parts, batch, 1, config.train).backward();
  Result result;
  for (const torch::Tensor& t :
       {parts.total, parts.mel, parts.mel_postnet, parts.gate, parts.guided_attention}) {
    result.losses.push_back(t.defined() ? t.item<double>() : 0.0);
  }
  for (const torch::Tensor& p : model->parameters()) {
    result.gradients.push_back(p.grad().defined() ? p.grad().clone() : torch::zeros_like(p));
  }
  return result;
}

// The largest |a - b| of each gradient relative to the gradient's norm, over all of them.
double worst_relative_difference(const Result& a, const Result& b) {
  double worst = 0;
  for (size_t i = 0; i < a.gradients.size(); ++i) {
    const double norm = a.gradients[i].norm().item<double>();
    const double diff = (a.gradients[i] - b.gradients[i]).abs().max().item<double>();
    worst = std::max(worst, norm > 0 ? diff / norm : diff);
  }
  return worst;
}

class LengthBucketPadding : public ::testing::TestWithParam<int> {};

}  // namespace

TEST_P(LengthBucketPadding, GivesTheLossesAndGradientsOfTheBatchPaddedToItsLongest) {
  const int r = GetParam();
  tts::config::Config config;
  config.model = tacotron2_test::small_options();
  config.train.guided_attention_weight = 1.0;  // its pairs must not see the padding either
  auto comm = tts::dist::make_communicator(tts::dist::RankInfo{}, config.distributed,
                                           tts::config::Backend::kGloo);
  const int n_mels = config.audio.n_mels;
  tts::data::Batch plain = tts::data::collate(examples(n_mels), r);
  // A bucket well past the batch's longest on both axes, its frames a multiple of r.
  tts::data::Batch padded =
      tts::data::collate(examples(n_mels), r, tts::data::PadTo{plain.text.size(1) + 13, 60});
  ASSERT_EQ(padded.text.size(1), plain.text.size(1) + 13);
  ASSERT_EQ(padded.mel.size(1), 60);
  ASSERT_EQ(padded.real_frame_count, plain.real_frame_count);
  ASSERT_EQ(padded.attention_pair_count, plain.attention_pair_count);

  const Result a = train_once(config, r, plain, *comm);
  const Result b = train_once(config, r, padded, *comm);
  ASSERT_EQ(a.gradients.size(), b.gradients.size());
  for (size_t i = 0; i < a.losses.size(); ++i) {
    EXPECT_NEAR(a.losses[i], b.losses[i], 1e-6 * std::max(1.0, std::abs(a.losses[i])))
        << "loss part " << i;
  }
  const double worst = worst_relative_difference(a, b);
  // Rounding alone: the padded positions add exact zeros, but reductions over a longer axis
  // (the frame means, the attention softmax, the products over B x T rows) may block and sum
  // in another order. The same tolerance as the W x B promise's (tests/cli/
  // test_train_distributed.cpp).
  EXPECT_LT(worst, 5e-6);
  double worst_loss = 0;
  for (size_t i = 0; i < a.losses.size(); ++i) {
    worst_loss = std::max(
        worst_loss, std::abs(a.losses[i] - b.losses[i]) / std::max(std::abs(a.losses[i]), 1e-30));
  }
  std::cout << "r " << r << ": worst gradient difference " << worst
            << " of a gradient's norm; worst loss part difference " << worst_loss << " relative\n";
}

INSTANTIATE_TEST_SUITE_P(ReductionFactors, LengthBucketPadding, ::testing::Values(1, 2, 3));

// Which axis's padding rounds differently: text alone (the encoder, the attention softmax over
// text positions) and frames alone (the decoder's extra steps, the postnet, the frame means).
TEST(LengthBucketPaddingAxes, EachAxisAloneKeepsTheGradientsToRounding) {
  tts::config::Config config;
  config.model = tacotron2_test::small_options();
  auto comm = tts::dist::make_communicator(tts::dist::RankInfo{}, config.distributed,
                                           tts::config::Backend::kGloo);
  const int n_mels = config.audio.n_mels;
  const tts::data::Batch plain = tts::data::collate(examples(n_mels), 1);
  const Result a = train_once(config, 1, plain, *comm);
  for (const auto& [name, pad] :
       {std::pair<const char*, tts::data::PadTo>{"text", {plain.text.size(1) + 13, 0}},
        {"frames", {0, 60}}}) {
    const Result b = train_once(config, 1, tts::data::collate(examples(n_mels), 1, pad), *comm);
    const double worst = worst_relative_difference(a, b);
    EXPECT_LT(worst, 5e-6) << name;
    std::cout << name << " padding alone: worst gradient difference " << worst
              << " of a gradient's norm; losses " << (a.losses == b.losses ? "equal" : "differ")
              << " bit for bit\n";
  }
}
