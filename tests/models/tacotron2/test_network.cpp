// Tacotron-2 model: parameter count against NVIDIA's, shapes, masking, inference, gradients,
// and the teacher-forced decoder against step-by-step inference.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>
#include <set>
#include <string>
#include <vector>

#include "small_options.h"
#include "tts/config/config.h"
#include "tts/core/cpu_features.h"
#include "tts/models/keyed_dropout.h"
#include "tts/models/tacotron2/layers/layers.h"
#include "tts/models/tacotron2/layers/network.h"
#include "tts/models/tacotron2/training/loss.h"
#include "tts/train/family.h"

namespace {

using tts::config::ModelOptions;
using tts::tacotron2::RnnPadding;
using tts::tacotron2::Tacotron2;
using tts::tacotron2::TacotronOutput;

constexpr int64_t kSymbols = 40;
constexpr int64_t kMels = 12;
constexpr int64_t kLinear = 17;

ModelOptions small_options(int r, bool linear) {
  ModelOptions o = tacotron2_test::small_options();
  o.n_frames_per_step = r;
  o.max_decoder_steps = 20;
  o.predict_linear = linear;
  o.cbhg_kernels = 3;
  o.cbhg_conv_channels = 8;
  o.cbhg_projection_dim = 12;
  o.cbhg_highway_layers = 2;
  o.cbhg_rnn_units = 8;
  return o;
}

ModelOptions without_dropout(ModelOptions o) {
  o.p_encoder_dropout = o.p_prenet_dropout = o.p_attention_dropout = o.p_decoder_dropout =
      o.p_postnet_dropout = 0;
  return o;
}

struct Batch {
  torch::Tensor text, text_lengths, mel, mel_lengths, stop, linear;
};

// Random batch: text lengths and mel lengths given; T_mel padded to a multiple of r.
Batch make_batch(const std::vector<int64_t>& text_lengths, const std::vector<int64_t>& mel_lengths,
                 int r, int64_t seed) {
  torch::manual_seed(seed);
  int64_t batch = static_cast<int64_t>(text_lengths.size());
  int64_t max_text = *std::max_element(text_lengths.begin(), text_lengths.end());
  int64_t max_mel = *std::max_element(mel_lengths.begin(), mel_lengths.end());
  max_mel = (max_mel + r - 1) / r * r;
  Batch b;
  b.text = torch::zeros({batch, max_text}, torch::kInt64);
  b.mel = torch::zeros({batch, max_mel, kMels});
  b.linear = torch::zeros({batch, max_mel, kLinear});
  b.stop = torch::zeros({batch, max_mel});
  for (int64_t i = 0; i < batch; ++i) {
    b.text[i].narrow(0, 0, text_lengths[i]).copy_(torch::randint(1, kSymbols, {text_lengths[i]}));
    b.mel[i].narrow(0, 0, mel_lengths[i]).copy_(torch::randn({mel_lengths[i], kMels}));
    b.linear[i].narrow(0, 0, mel_lengths[i]).copy_(torch::randn({mel_lengths[i], kLinear}));
    b.stop[i].narrow(0, mel_lengths[i] - 1, max_mel - mel_lengths[i] + 1).fill_(1);
  }
  b.text_lengths = torch::tensor(text_lengths, torch::kInt64);
  b.mel_lengths = torch::tensor(mel_lengths, torch::kInt64);
  return b;
}

tts::tacotron2::Targets targets_of(const Batch& b) {
  return {b.mel, b.mel_lengths, b.stop, b.linear};
}

// The parameter's tensor (a handle sharing the model's storage, so in-place changes reach it).
torch::Tensor parameter(Tacotron2& model, const std::string& name) {
  auto params = model->named_parameters();
  auto* found = params.find(name);
  EXPECT_NE(found, nullptr) << name;
  return found ? *found : torch::Tensor();
}

}  // namespace

TEST(Tacotron2, ParameterCountMatchesNvidiaWithTheirSymbolTable) {
  auto config =
      tts::config::load_config(std::string(TTS_SOURCE_DIR) + "/configs/ljspeech_tacotron2.yaml");
  Tacotron2 nvidia(config.model, 148, config.audio.n_mels, config.audio.n_linear());
  int64_t count = tts::train::count_parameters(*nvidia);
  // NVIDIA/tacotron2 (hparams.py, 148 symbols) has 28,193,153 parameters.
  EXPECT_EQ(count, 28193153);
  EXPECT_NEAR(static_cast<double>(count) / 28.19e6, 1.0, 0.01);
  // Every symbol costs one embedding row of symbols_embedding_dim.
  Tacotron2 smaller(config.model, 66, config.audio.n_mels, config.audio.n_linear());
  EXPECT_EQ(count - tts::train::count_parameters(*smaller), (148 - 66) * 512);
}

// The count from the shapes alone, which the constructor checks before it allocates, is the count
// of the built model, for every part (the linear head, an r schedule's projections).
TEST(Tacotron2, ParameterCountIsKnownBeforeTheModelIsBuilt) {
  for (bool linear : {false, true}) {
    for (int64_t max_r : {0, 3}) {
      ModelOptions o = small_options(max_r > 0 ? 2 : 1, linear);
      Tacotron2 model(o, kSymbols, kMels, kLinear, max_r);
      EXPECT_EQ(tts::tacotron2::parameter_count_of(o, kSymbols, kMels, kLinear, max_r),
                static_cast<double>(tts::train::count_parameters(*model)))
          << "linear " << linear << ", max_r " << max_r;
    }
  }
  // Widths under every ceiling that together make 850 million parameters (3.4 GB): refused, with
  // the figure.
  ModelOptions huge;
  huge.decoder_rnn_dim = huge.attention_rnn_dim = tts::config::kMaxModelWidth;
  try {
    Tacotron2 model(huge, kSymbols, kMels, kLinear);
    FAIL() << "built a model past the parameter limit";
  } catch (const tts::Error& e) {
    EXPECT_NE(std::string(e.what()).find("past the limit of 2 GB"), std::string::npos) << e.what();
  }
}

TEST(Tacotron2, ParameterNamesArePlainAndOrdered) {
  Tacotron2 model(small_options(1, true), kSymbols, kMels, kLinear);
  auto params = model->named_parameters();
  std::vector<std::string> keys = params.keys();
  ASSERT_FALSE(keys.empty());
  EXPECT_EQ(keys.front(), "embedding.weight");
  EXPECT_EQ(keys[1], "encoder.conv0.weight");
  EXPECT_NE(params.find("decoder.attention_rnn.weight_ih"), nullptr);
  EXPECT_NE(params.find("decoder.attention_layer.location_conv.weight"), nullptr);
  EXPECT_NE(params.find("postnet.conv2.weight"), nullptr);
  EXPECT_EQ(keys.back(), "linear_head.output.bias");
  Tacotron2 again(small_options(1, true), kSymbols, kMels, kLinear);
  EXPECT_EQ(again->named_parameters().keys(), keys);
}

class ShapesTest : public ::testing::TestWithParam<std::tuple<int, bool>> {};

TEST_P(ShapesTest, ForwardAndInferenceShapes) {
  auto [r, linear] = GetParam();
  Tacotron2 model(small_options(r, linear), kSymbols, kMels, kLinear);
  Batch b = make_batch({7, 5, 3}, {10, 13, 4}, r, 1);
  int64_t frames = b.mel.size(1);
  TacotronOutput out = model->forward(b.text, b.text_lengths, b.mel, b.mel_lengths);
  EXPECT_EQ(out.mel.sizes(), b.mel.sizes());
  EXPECT_EQ(out.mel_postnet.sizes(), b.mel.sizes());
  EXPECT_EQ(out.gate.sizes(), (std::vector<int64_t>{3, frames}));
  EXPECT_EQ(out.alignments.sizes(), (std::vector<int64_t>{3, frames / r, 7}));
  EXPECT_EQ(out.linear.defined(), linear);
  if (linear) {
    EXPECT_EQ(out.linear.sizes(), (std::vector<int64_t>{3, frames, kLinear}));
  }
  EXPECT_TRUE(torch::equal(out.mel_lengths, b.mel_lengths));
  // Attention weights are distributions over the valid text positions only.
  EXPECT_TRUE(torch::allclose(out.alignments.sum(2), torch::ones({3, frames / r}), 1e-5, 1e-5));
  EXPECT_EQ(out.alignments[2].narrow(1, 3, 4).abs().max().item<float>(), 0.0f);
  // Frames past an utterance's length are zero in every spectrogram output.
  EXPECT_EQ(out.mel[2].narrow(0, 4, frames - 4).abs().max().item<float>(), 0.0f);
  EXPECT_EQ(out.mel_postnet[0].narrow(0, 10, frames - 10).abs().max().item<float>(), 0.0f);
  if (linear) {
    EXPECT_EQ(out.linear[2].narrow(0, 4, frames - 4).abs().max().item<float>(), 0.0f);
  }

  auto loss = tts::tacotron2::compute_loss(out, targets_of(b), b.text_lengths,
                                           tts::tacotron2::loss_options({}));
  EXPECT_EQ(loss.total.dim(), 0);
  EXPECT_EQ(loss.linear.defined(), linear);
  EXPECT_FALSE(loss.guided_attention.defined());

  model->eval();
  torch::NoGradGuard no_grad;
  TacotronOutput inferred = model->infer(b.text, b.text_lengths);
  int64_t steps = inferred.alignments.size(1);
  EXPECT_GE(steps, 1);
  EXPECT_LE(steps, 20);
  EXPECT_EQ(inferred.mel.sizes(), (std::vector<int64_t>{3, steps * r, kMels}));
  EXPECT_EQ(inferred.gate.sizes(), (std::vector<int64_t>{3, steps * r}));
  EXPECT_EQ(inferred.alignments.sizes(), (std::vector<int64_t>{3, steps, 7}));
  EXPECT_EQ(inferred.mel_lengths.sizes(), (std::vector<int64_t>{3}));
  if (linear) {
    EXPECT_EQ(inferred.linear.sizes(), (std::vector<int64_t>{3, steps * r, kLinear}));
  }
}

INSTANTIATE_TEST_SUITE_P(FramesPerStepAndLinearHead, ShapesTest,
                         ::testing::Combine(::testing::Values(1, 2, 3), ::testing::Bool()));

TEST(Modules, ShapesThroughEachModule) {
  ModelOptions o = small_options(2, true);
  torch::manual_seed(0);
  tts::tacotron2::Encoder encoder(o);
  torch::Tensor lengths = torch::tensor({6, 4}, torch::kInt64);
  torch::Tensor memory = encoder(torch::randn({2, 6, 16}), lengths);
  EXPECT_EQ(memory.sizes(), (std::vector<int64_t>{2, 6, 16}));
  EXPECT_EQ(memory[1].narrow(0, 4, 2).abs().max().item<float>(), 0.0f);

  tts::tacotron2::Attention attention(20, 16, 10, 4, 7);
  torch::Tensor processed = attention->process_memory(memory);
  EXPECT_EQ(processed.sizes(), (std::vector<int64_t>{2, 10, 6}));
  torch::Tensor location = attention->location_weight();
  EXPECT_EQ(location.sizes(), (std::vector<int64_t>{10, 2, 7}));
  torch::Tensor mask = tts::tacotron2::padding_mask(lengths, 6).unsqueeze(1);
  auto [context, weights] = attention->step(
      attention->query_weight(tts::tacotron2::RecurrentProductPath::kKernel), torch::randn({2, 20}),
      processed, memory, torch::rand({2, 2, 6}), location, mask);
  EXPECT_EQ(context.sizes(), (std::vector<int64_t>{2, 16}));
  EXPECT_EQ(weights.sizes(), (std::vector<int64_t>{2, 1, 6}));

  tts::tacotron2::Prenet prenet(kMels * 2, 8, 0.5);
  EXPECT_EQ(prenet(torch::randn({5, 2, kMels * 2})).sizes(), (std::vector<int64_t>{5, 2, 8}));

  tts::tacotron2::Decoder decoder(o, kMels);
  auto decoded =
      decoder(memory, tts::tacotron2::padding_mask(lengths, 6), torch::randn({2, 8, kMels}));
  EXPECT_EQ(decoded.mel.sizes(), (std::vector<int64_t>{2, 8, kMels}));
  EXPECT_EQ(decoded.gate.sizes(), (std::vector<int64_t>{2, 8}));
  EXPECT_EQ(decoded.alignments.sizes(), (std::vector<int64_t>{2, 4, 6}));

  torch::Tensor mel_lengths = torch::tensor({8, 5}, torch::kInt64);
  tts::tacotron2::Postnet postnet(o, kMels);
  EXPECT_EQ(postnet(torch::randn({2, 8, kMels}), mel_lengths).sizes(),
            (std::vector<int64_t>{2, 8, kMels}));
  tts::tacotron2::CBHG cbhg(o, kMels, kLinear);
  torch::Tensor linear = cbhg(torch::randn({2, 8, kMels}), mel_lengths);
  EXPECT_EQ(linear.sizes(), (std::vector<int64_t>{2, 8, kLinear}));
  EXPECT_EQ(linear[1].narrow(0, 5, 3).abs().max().item<float>(), 0.0f);
}

TEST(Tacotron2, LocationLayersComposeIntoOneConvolution) {
  torch::manual_seed(3);
  tts::tacotron2::Attention attention(20, 16, 10, 4, 7);
  torch::Tensor weights = torch::rand({2, 2, 9});
  auto params = attention->named_parameters();
  torch::Tensor separate =
      torch::matmul(params["location_dense.weight"],
                    torch::conv1d(weights, params["location_conv.weight"], {}, 1, 3));
  torch::Tensor composed = torch::conv1d(weights, attention->location_weight(), {}, 1, 3);
  EXPECT_TRUE(torch::allclose(separate, composed, 1e-5, 1e-6));
}

TEST(Tacotron2, PaddingChangesNothingForTheOtherItems) {
  for (int r : {1, 3}) {
    ModelOptions o = without_dropout(small_options(r, true));
    o.zero_padding_in_convolutions = true;  // NVIDIA's convolutions see the padding
    Tacotron2 model(o, kSymbols, kMels, kLinear);
    model->eval();  // BatchNorm's batch statistics would mix the items in training mode
    Batch small = make_batch({6, 4}, {9, 7}, r, 5);
    // The same two utterances with a longer third one: more padding for the first two.
    Batch big = make_batch({6, 4, 11}, {9, 7, 17}, r, 6);
    big.text.narrow(0, 0, 2).zero_();
    big.text.narrow(0, 0, 2).narrow(1, 0, 6).copy_(small.text);
    big.mel.narrow(0, 0, 2).zero_();
    big.mel.narrow(0, 0, 2).narrow(1, 0, small.mel.size(1)).copy_(small.mel);
    big.linear.narrow(0, 0, 2).zero_();
    big.linear.narrow(0, 0, 2).narrow(1, 0, small.mel.size(1)).copy_(small.linear);
    big.stop.narrow(0, 0, 2).fill_(1);
    big.stop.narrow(0, 0, 2).narrow(1, 0, small.mel.size(1)).copy_(small.stop);

    tts::tacotron2::LossOptions train = tts::tacotron2::loss_options({});
    train.guided_attention_weight = 1.0;
    TacotronOutput a = model->forward(small.text, small.text_lengths, small.mel, small.mel_lengths);
    TacotronOutput b = model->forward(big.text, big.text_lengths, big.mel, big.mel_lengths);
    int64_t frames = small.mel.size(1);
    auto first_two = [&](const torch::Tensor& t, int64_t length) {
      return t.narrow(0, 0, 2).narrow(1, 0, length);
    };
    TacotronOutput b2 = b;  // r and every other field as the model gave them
    b2.mel = first_two(b.mel, frames);
    b2.mel_postnet = first_two(b.mel_postnet, frames);
    b2.gate = first_two(b.gate, frames);
    b2.alignments = first_two(b.alignments, frames / r).narrow(2, 0, 6);
    b2.linear = first_two(b.linear, frames);
    b2.mel_lengths = small.mel_lengths;
    EXPECT_TRUE(torch::allclose(a.mel_postnet, b2.mel_postnet, 1e-5, 1e-5)) << "r=" << r;
    EXPECT_TRUE(torch::allclose(a.linear, b2.linear, 1e-5, 1e-5)) << "r=" << r;
    EXPECT_TRUE(torch::allclose(a.alignments, b2.alignments, 1e-5, 1e-6)) << "r=" << r;
    auto la = tts::tacotron2::compute_loss(a, targets_of(small), small.text_lengths, train);
    auto lb = tts::tacotron2::compute_loss(b2, targets_of(small), small.text_lengths, train);
    EXPECT_NEAR(la.total.item<double>(), lb.total.item<double>(), 1e-5) << "r=" << r;
    EXPECT_NEAR(la.guided_attention.item<double>(), lb.guided_attention.item<double>(), 1e-6);
  }
}

TEST(Loss, PaddedFramesOfOutputsAndTargetsCountForNothing) {
  Batch b = make_batch({5, 3}, {8, 5}, 1, 2);
  TacotronOutput out{torch::randn_like(b.mel),
                     torch::randn_like(b.mel),
                     torch::randn({2, 8}),
                     torch::softmax(torch::randn({2, 8, 5}), 2),
                     torch::randn_like(b.linear),
                     b.mel_lengths,
                     /*r=*/1};
  tts::tacotron2::LossOptions train = tts::tacotron2::loss_options({});
  train.guided_attention_weight = 2.0;
  auto before = tts::tacotron2::compute_loss(out, targets_of(b), b.text_lengths, train);
  for (torch::Tensor* t : {&out.mel, &out.mel_postnet, &out.linear, &b.mel, &b.linear}) {
    t->select(0, 1).narrow(0, 5, 3).normal_(0, 100);
  }
  out.gate[1].narrow(0, 5, 3).fill_(-50);
  out.alignments[1].narrow(0, 5, 3).fill_(7);
  out.alignments[1].narrow(1, 3, 2).fill_(7);
  auto after = tts::tacotron2::compute_loss(out, targets_of(b), b.text_lengths, train);
  EXPECT_NEAR(before.total.item<double>(), after.total.item<double>(), 1e-5);
  EXPECT_NEAR(before.guided_attention.item<double>(), after.guided_attention.item<double>(), 1e-6);
  // total = mel + postnet + gate + linear + weight * guided attention.
  double sum = before.mel.item<double>() + before.mel_postnet.item<double>() +
               before.gate.item<double>() + before.linear.item<double>() +
               2.0 * before.guided_attention.item<double>();
  EXPECT_NEAR(before.total.item<double>(), sum, 1e-5);
}

TEST(Loss, MatchesHandComputedValues) {
  // One utterance of 2 valid frames out of 3, 1 mel channel.
  torch::Tensor prediction = torch::tensor({1.0f, 2.0f, 9.0f}).view({1, 3, 1});
  torch::Tensor target = torch::tensor({0.0f, 4.0f, 0.0f}).view({1, 3, 1});
  torch::Tensor lengths = torch::tensor({2}, torch::kInt64);
  torch::Tensor gate = torch::tensor({{0.0f, 0.0f, 5.0f}});
  torch::Tensor stop = torch::tensor({{0.0f, 1.0f, 1.0f}});
  TacotronOutput out{prediction, prediction, gate, torch::full({1, 3, 2}, 0.5f), {}, lengths, 1};
  tts::tacotron2::LossOptions train = tts::tacotron2::loss_options({});
  train.stop_pos_weight = 3.0;
  auto mse =
      tts::tacotron2::compute_loss(out, {target, lengths, stop, {}}, torch::tensor({2}), train);
  EXPECT_NEAR(mse.mel.item<double>(), (1.0 + 4.0) / 2, 1e-6);
  // BCE(0, 0) = log 2; with pos_weight 3, BCE(0, 1) = 3 log 2.
  EXPECT_NEAR(mse.gate.item<double>(), (std::log(2.0) + 3 * std::log(2.0)) / 2, 1e-6);
  train.loss = tts::config::MelLoss::kL1;
  auto l1 =
      tts::tacotron2::compute_loss(out, {target, lengths, stop, {}}, torch::tensor({2}), train);
  EXPECT_NEAR(l1.mel.item<double>(), (1.0 + 2.0) / 2, 1e-6);
}

TEST(Loss, PaddedBatchNormalizationIsNvidiasMeanOverThePaddedBatch) {
  // Two utterances of 2 and 4 valid frames out of 4, 2 mel channels; NVIDIA's Tacotron2Loss is
  // MSELoss over its masked outputs (0 past the length) against zero-padded targets, and
  // BCEWithLogitsLoss over gate logits set to 1e3 past the length against targets of 1 there:
  // the padded elements add no error but count in the mean.
  torch::manual_seed(3);
  torch::Tensor lengths = torch::tensor({2, 4}, torch::kInt64);
  torch::Tensor valid = (torch::arange(4).view({1, 4}) < lengths.view({2, 1})).to(torch::kFloat);
  torch::Tensor target = torch::randn({2, 4, 2}) * valid.unsqueeze(2);
  torch::Tensor mel = torch::randn({2, 4, 2});
  torch::Tensor postnet = torch::randn({2, 4, 2});
  torch::Tensor gate = torch::randn({2, 4});
  torch::Tensor stop = torch::tensor({{0.0f, 1.0f, 1.0f, 1.0f}, {0.0f, 0.0f, 0.0f, 1.0f}});
  TacotronOutput out{mel, postnet, gate, torch::full({2, 4, 3}, 1.0f / 3), {}, lengths, 1};
  tts::tacotron2::LossOptions train = tts::tacotron2::loss_options({});
  train.loss_normalization = tts::config::LossNormalization::kPaddedBatch;
  auto ours =
      tts::tacotron2::compute_loss(out, {target, lengths, stop, {}}, torch::tensor({3, 2}), train);
  torch::Tensor masked_mel = mel * valid.unsqueeze(2);
  torch::Tensor masked_postnet = postnet * valid.unsqueeze(2);
  torch::Tensor masked_gate = torch::where(valid > 0, gate, torch::full_like(gate, 1e3));
  double mel_loss = torch::mse_loss(masked_mel, target).item<double>();
  double postnet_loss = torch::mse_loss(masked_postnet, target).item<double>();
  double gate_loss = torch::binary_cross_entropy_with_logits(masked_gate, stop).item<double>();
  EXPECT_NEAR(ours.mel.item<double>(), mel_loss, 1e-6);
  EXPECT_NEAR(ours.mel_postnet.item<double>(), postnet_loss, 1e-6);
  EXPECT_NEAR(ours.gate.item<double>(), gate_loss, 1e-6);
  EXPECT_NEAR(ours.total.item<double>(), mel_loss + postnet_loss + gate_loss, 1e-5);
  // real_frames averages over the 6 real frames instead of the 8 padded ones.
  train.loss_normalization = tts::config::LossNormalization::kRealFrames;
  auto real =
      tts::tacotron2::compute_loss(out, {target, lengths, stop, {}}, torch::tensor({3, 2}), train);
  EXPECT_NEAR(real.mel.item<double>(), mel_loss * 8.0 / 6.0, 1e-6);
  EXPECT_NEAR(real.gate.item<double>(), gate_loss * 8.0 / 6.0, 1e-6);
}

TEST(Loss, WeightedTotalScalesTheFramePartsAndTheGuidedPartApart) {
  tts::tacotron2::LossParts parts;
  parts.frames = torch::tensor(2.0);
  parts.guided_attention = torch::tensor(0.5);
  tts::tacotron2::LossOptions train = tts::tacotron2::loss_options({});
  train.guided_attention_weight = 10;
  EXPECT_NEAR(tts::tacotron2::weighted_total(parts, 3.0, 0.25, train).item<double>(),
              2.0 * 3.0 + 10 * 0.5 * 0.25, 1e-9);
  parts.guided_attention = torch::Tensor();
  EXPECT_NEAR(tts::tacotron2::weighted_total(parts, 3.0, 0.25, train).item<double>(), 6.0, 1e-9);
}

// Weights as 0-dim float64 tensors (from a batch's device counts) give the loss and its dtype
// that double scalars give, and gradients with one rounding: the product in float64, rounded
// once to float (also under an average over 3 micro-batches). A double scalar's gradient is
// that on libtorch 1.13; 2.x rounds the scalar to float first, 1 ulp away at most.
TEST(Loss, WeightTensorsGiveWhatDoubleScalarsGive) {
  tts::tacotron2::LossOptions train = tts::tacotron2::loss_options({});
  train.guided_attention_weight = 10;
  const double frame_weight = 7.0 * 2 / 9.0, pair_weight = 11.0 * 2 / 13.0;
  auto run = [&](bool tensors) {
    tts::tacotron2::LossParts parts;
    torch::Tensor frames = torch::tensor(1.2345f, torch::requires_grad());
    torch::Tensor attention = torch::tensor(0.678f, torch::requires_grad());
    parts.frames = frames * 1;
    parts.guided_attention = attention * 1;
    torch::Tensor total =
        tensors ? tts::tacotron2::weighted_total(
                      parts, torch::scalar_tensor(frame_weight, torch::kFloat64),
                      torch::scalar_tensor(pair_weight, torch::kFloat64), train)
                : parts.frames * frame_weight +
                      parts.guided_attention * (train.guided_attention_weight * pair_weight);
    torch::Tensor loss = total / 3.0;
    loss.backward();
    return std::vector<torch::Tensor>{loss, frames.grad(), attention.grad()};
  };
  const auto scalars = run(false);
  const auto tensors = run(true);
  EXPECT_EQ(tensors[0].scalar_type(), torch::kFloat32);
  EXPECT_TRUE(torch::equal(scalars[0], tensors[0]))
      << scalars[0].item<double>() << " against " << tensors[0].item<double>();
  // The gradient of the average, 1/3 in float, times each weight in float64, rounded once.
  const double third = static_cast<double>(1.0f / 3.0f);
  EXPECT_EQ(tensors[1].item<float>(), static_cast<float>(third * frame_weight));
  EXPECT_EQ(tensors[2].item<float>(),
            static_cast<float>(third * (pair_weight * train.guided_attention_weight)));
  for (size_t i = 1; i < scalars.size(); ++i) {
    EXPECT_NEAR(scalars[i].item<double>(), tensors[i].item<double>(),
                1.2e-7 * std::abs(scalars[i].item<double>()))
        << i;
  }
}

TEST(Loss, GuidedAttentionWeightsAreZeroOnTheDiagonalAndOutsideTheLengths) {
  torch::Tensor w = tts::tacotron2::guided_attention_weights(
      torch::tensor({4}, torch::kInt64), torch::tensor({4}, torch::kInt64), 5, 6, 0.2);
  EXPECT_EQ(w.sizes(), (std::vector<int64_t>{1, 5, 6}));
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(w[0][i][i].item<double>(), 0.0, 1e-7);
  EXPECT_NEAR(w[0][0][3].item<double>(), 1 - std::exp(-0.5625 / 0.08), 1e-6);
  EXPECT_EQ(w[0][4].abs().max().item<float>(), 0.0f);
  EXPECT_EQ(w[0].narrow(1, 4, 2).abs().max().item<float>(), 0.0f);
}

TEST(Tacotron2, InferenceStopsAtTheGateAndReturnsLengths) {
  for (int r : {1, 2, 3}) {
    ModelOptions o = small_options(r, false);
    o.max_decoder_steps = 6;
    Tacotron2 model(o, kSymbols, kMels, kLinear);
    model->eval();
    torch::NoGradGuard no_grad;
    Batch b = make_batch({5, 3}, {4, 4}, r, 4);
    torch::Tensor gate_bias = parameter(model, "decoder.gate_layer.bias");
    torch::Tensor gate_weight = parameter(model, "decoder.gate_layer.weight");
    gate_weight.zero_();
    // Never stops: max_decoder_steps steps of r frames.
    gate_bias.fill_(-20);
    TacotronOutput never = model->infer(b.text, b.text_lengths);
    EXPECT_EQ(never.mel.size(1), 6 * r);
    EXPECT_TRUE(torch::equal(never.mel_lengths, torch::full({2}, 6 * r, torch::kInt64)));
    // Stops at the last frame of the first step.
    gate_bias.fill_(-20);
    gate_bias[r - 1].fill_(20);
    TacotronOutput first = model->infer(b.text, b.text_lengths);
    EXPECT_EQ(first.mel.size(1), r);
    EXPECT_TRUE(torch::equal(first.mel_lengths, torch::full({2}, r, torch::kInt64)));
    // Stops at the first frame of the first step: frames past it are zero.
    gate_bias.fill_(20);
    TacotronOutput immediate = model->infer(b.text, b.text_lengths);
    EXPECT_TRUE(torch::equal(immediate.mel_lengths, torch::ones({2}, torch::kInt64)));
    EXPECT_EQ(immediate.mel_postnet.narrow(1, 1, r - 1).abs().sum().item<float>(), 0.0f);
  }
}

TEST(Tacotron2, InferenceStopsEachItemOnItsOwn) {
  // The stop logit follows the attention context; items with different texts stop at different
  // steps. Whatever the steps, each item's length is where its own stop probability first
  // passed the threshold, and its frames after that are zero.
  Tacotron2 model(without_dropout(small_options(1, false)), kSymbols, kMels, kLinear);
  model->eval();
  torch::NoGradGuard no_grad;
  torch::manual_seed(11);
  parameter(model, "decoder.gate_layer.weight").normal_(0, 1.0);
  parameter(model, "decoder.gate_layer.bias").fill_(-1.0);
  Batch b = make_batch({7, 2, 5}, {4, 4, 4}, 1, 12);
  TacotronOutput out = model->infer(b.text, b.text_lengths);
  torch::Tensor probabilities = torch::sigmoid(out.gate);
  for (int64_t i = 0; i < 3; ++i) {
    int64_t length = out.mel_lengths[i].item<int64_t>();
    ASSERT_GE(length, 1);
    ASSERT_LE(length, out.mel.size(1));
    if (length > 1) {
      EXPECT_LE(probabilities[i].narrow(0, 0, length - 1).max().item<double>(), 0.5);
    }
    if (length < 20) {
      EXPECT_GT(probabilities[i][length - 1].item<double>(), 0.5);
    }
    if (length < out.mel.size(1)) {
      EXPECT_EQ(
          out.mel_postnet[i].narrow(0, length, out.mel.size(1) - length).abs().max().item<float>(),
          0.0f);
    }
  }
}

TEST(Tacotron2, TeacherForcingOnInferredFramesReproducesInference) {
  // The batched teacher-forced decoder (prenet and input projections for all steps at once)
  // must compute exactly what step-by-step inference computes when fed the same frames.
  for (int r : {1, 2}) {
    ModelOptions o = without_dropout(small_options(r, true));
    o.max_decoder_steps = 7;
    Tacotron2 model(o, kSymbols, kMels, kLinear);
    model->eval();
    torch::NoGradGuard no_grad;
    parameter(model, "decoder.gate_layer.bias").fill_(-30);
    Batch b = make_batch({6, 4}, {4, 4}, r, 8);
    TacotronOutput inferred = model->infer(b.text, b.text_lengths);
    ASSERT_EQ(inferred.mel.size(1), 7 * r);
    TacotronOutput forced =
        model->forward(b.text, b.text_lengths, inferred.mel, inferred.mel_lengths);
    EXPECT_TRUE(torch::allclose(forced.mel, inferred.mel, 1e-4, 1e-5)) << "r=" << r;
    EXPECT_TRUE(torch::allclose(forced.mel_postnet, inferred.mel_postnet, 1e-4, 1e-5));
    EXPECT_TRUE(torch::allclose(forced.gate, inferred.gate, 1e-4, 1e-5));
    EXPECT_TRUE(torch::allclose(forced.alignments, inferred.alignments, 1e-4, 1e-6));
    EXPECT_TRUE(torch::allclose(forced.linear, inferred.linear, 1e-4, 1e-5));
  }
}

TEST(Tacotron2, DecoderCellsMatchTorchLSTMCell) {
  // Our hand-applied LSTM cells hold torch::nn::LSTMCell's parameters with the same meaning:
  // the first decoder step, whose inputs are all zero except the prenet output, equals
  // torch::lstm_cell on the go frame's prenet output.
  ModelOptions o = without_dropout(small_options(1, false));
  tts::tacotron2::Decoder decoder(o, kMels);
  decoder->eval();
  torch::NoGradGuard no_grad;
  torch::Tensor memory = torch::randn({1, 3, 16});
  auto mask = tts::tacotron2::padding_mask(torch::tensor({3}, torch::kInt64), 3);
  auto out = decoder(memory, mask, torch::randn({1, 1, kMels}));
  auto p = decoder->named_parameters();
  torch::Tensor go = torch::zeros({1, kMels});
  torch::Tensor prenet = torch::relu(torch::mm(
      torch::relu(torch::mm(go, p["prenet.layer0.weight"].t())), p["prenet.layer1.weight"].t()));
  torch::Tensor zeros_att = torch::zeros({1, 20});
  auto attention =
      torch::lstm_cell(torch::cat({prenet, torch::zeros({1, 16})}, 1), {zeros_att, zeros_att},
                       p["attention_rnn.weight_ih"], p["attention_rnn.weight_hh"],
                       p["attention_rnn.bias_ih"], p["attention_rnn.bias_hh"]);
  // With zero previous weights the location term vanishes: weights follow query and memory.
  torch::Tensor query =
      torch::mm(std::get<0>(attention), p["attention_layer.query_layer.weight"].t());
  torch::Tensor keys = torch::matmul(memory, p["attention_layer.memory_layer.weight"].t());
  torch::Tensor energies =
      torch::matmul(torch::tanh(keys + query.unsqueeze(1)), p["attention_layer.v.weight"].t());
  torch::Tensor weights = torch::softmax(energies.squeeze(2), 1);
  EXPECT_TRUE(torch::allclose(out.alignments[0][0], weights[0], 1e-5, 1e-6));
  torch::Tensor context = torch::mm(weights, memory[0]);
  torch::Tensor zeros_dec = torch::zeros({1, 24});
  auto decoder_cell =
      torch::lstm_cell(torch::cat({std::get<0>(attention), context}, 1), {zeros_dec, zeros_dec},
                       p["decoder_rnn.weight_ih"], p["decoder_rnn.weight_hh"],
                       p["decoder_rnn.bias_ih"], p["decoder_rnn.bias_hh"]);
  torch::Tensor mel =
      torch::addmm(p["linear_projection.bias"], torch::cat({std::get<0>(decoder_cell), context}, 1),
                   p["linear_projection.weight"].t());
  EXPECT_TRUE(torch::allclose(out.mel[0], mel, 1e-5, 1e-6));
}

TEST(Tacotron2, GradientReachesEveryParameter) {
  Tacotron2 model(small_options(2, true), kSymbols, kMels, kLinear);
  Batch b = make_batch({6, 4}, {9, 7}, 2, 9);
  tts::tacotron2::LossOptions train = tts::tacotron2::loss_options({});
  train.guided_attention_weight = 1.0;
  TacotronOutput out = model->forward(b.text, b.text_lengths, b.mel, b.mel_lengths);
  tts::tacotron2::compute_loss(out, targets_of(b), b.text_lengths, train).total.backward();
  for (const auto& item : model->named_parameters()) {
    ASSERT_TRUE(item.value().grad().defined()) << item.key();
    EXPECT_GT(item.value().grad().abs().sum().item<double>(), 0.0) << item.key();
    EXPECT_TRUE(torch::isfinite(item.value().grad()).all().item<bool>()) << item.key();
  }
}

TEST(LSTMCellPointwise, MatchesComposedOpsForwardAndBackward) {
  torch::manual_seed(21);
  for (bool with_mask : {false, true}) {
    auto options = torch::TensorOptions().dtype(torch::kDouble).requires_grad(true);
    torch::Tensor gates = torch::randn({3, 4 * 5}, options);
    torch::Tensor cell = torch::randn({3, 5}, options);
    torch::Tensor mask;
    if (with_mask) mask = torch::empty({3, 5}, torch::kDouble).bernoulli_(0.7).div_(0.7);
    auto [h, c] = tts::tacotron2::lstm_cell_pointwise(gates, cell, mask);
    torch::Tensor weights_h = torch::randn({3, 5}, torch::kDouble);
    torch::Tensor weights_c = torch::randn({3, 5}, torch::kDouble);
    auto fused = torch::autograd::grad({(h * weights_h + c * weights_c).sum()}, {gates, cell});

    auto chunks = gates.chunk(4, 1);
    torch::Tensor ref_c = chunks[1].sigmoid() * cell + chunks[0].sigmoid() * chunks[2].tanh();
    torch::Tensor ref_h = chunks[3].sigmoid() * ref_c.tanh();
    if (with_mask) ref_h = ref_h * mask;
    auto reference =
        torch::autograd::grad({(ref_h * weights_h + ref_c * weights_c).sum()}, {gates, cell});
    EXPECT_TRUE(torch::allclose(h, ref_h, 1e-12, 1e-12));
    EXPECT_TRUE(torch::allclose(c, ref_c, 1e-12, 1e-12));
    EXPECT_TRUE(torch::allclose(fused[0], reference[0], 1e-10, 1e-12)) << with_mask;
    EXPECT_TRUE(torch::allclose(fused[1], reference[1], 1e-10, 1e-12)) << with_mask;
  }
}

// A weight shared by several steps (as the decoder's LSTM weights): recurrent_linear's values and
// the gradients of the parameters, the bases and the inputs match torch::addmm's, also through a
// second backward of a retained graph; with a small batch and one over 128 (always the GEMM), by
// each way of computing the per-step products; with more steps than one weight-gradient buffer
// holds (kGradientRows rows), so that the buffer is flushed during the backward.
class RecurrentLinearTest
    : public ::testing::TestWithParam<std::tuple<int64_t, tts::tacotron2::RecurrentProductPath>> {};

TEST_P(RecurrentLinearTest, MatchesAddmmOverSeveralStepsForwardAndBackward) {
  torch::manual_seed(22);
  auto [batch, path] = GetParam();
  // Steps enough to fill the gradient buffer more than once: 2 of the 3 products per step use
  // the pair's weight.
  int64_t steps = 2 + tts::tacotron2::kGradientRows / batch;
  auto options = torch::TensorOptions().dtype(torch::kDouble);
  // Weights small enough that the recurrence contracts: over hundreds of steps an expanding one
  // would amplify the paths' different rounding beyond any tolerance.
  auto weight = [&](int64_t in) { return (0.3 * torch::randn({8, in}, options)).requires_grad_(); };
  torch::Tensor first = weight(3), second = weight(5), single = weight(8);
  torch::Tensor bias = torch::randn({8}, options).requires_grad_();
  torch::Tensor gates = torch::randn({steps, batch, 8}, options).requires_grad_();
  torch::Tensor x0 = torch::randn({batch, 8}, options).requires_grad_();
  std::vector<torch::Tensor> inputs{first, second, single, bias, gates, x0};

  auto run = [&](bool fused) {
    torch::Tensor x = x0, total = torch::zeros({}, torch::kDouble);
    tts::tacotron2::RecurrentWeight pair, one;
    if (fused) {
      pair = tts::tacotron2::make_step_weight(path, first, second);
      one = tts::tacotron2::make_step_weight(path, single);
    }
    torch::Tensor weight = torch::cat({first, second}, 1);
    for (int64_t t = 0; t < steps; ++t) {
      // Bases of every kind: [B, out], [out], none.
      torch::Tensor a = fused ? tts::tacotron2::recurrent_linear(pair, gates[t], x)
                              : torch::addmm(gates[t], x, weight.t());
      torch::Tensor b = fused ? tts::tacotron2::recurrent_linear(pair, bias, torch::tanh(a))
                              : torch::addmm(bias, torch::tanh(a), weight.t());
      torch::Tensor c =
          fused ? tts::tacotron2::recurrent_linear(one, {}, b) : torch::mm(b, single.t());
      x = torch::tanh(c);
      total = total + (x * x).sum() * (t + 1);
    }
    std::vector<torch::Tensor> values{x};
    auto grads = torch::autograd::grad({total}, inputs, {}, /*retain_graph=*/true);
    auto again = torch::autograd::grad({total}, inputs);
    values.insert(values.end(), grads.begin(), grads.end());
    values.insert(values.end(), again.begin(), again.end());
    return values;
  };
  auto fused = run(true), reference = run(false);
  ASSERT_EQ(fused.size(), reference.size());
  for (size_t i = 0; i < fused.size(); ++i) {
    // Summation orders differ: an absolute tolerance relative to the largest value.
    double scale = 1 + reference[i].abs().max().item<double>();
    EXPECT_TRUE(torch::allclose(fused[i], reference[i], 1e-10, 1e-12 * scale)) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(
    BatchAndPath, RecurrentLinearTest,
    ::testing::Combine(::testing::Values(2, 130),
                       ::testing::Values(tts::tacotron2::RecurrentProductPath::kFastest,
                                         tts::tacotron2::RecurrentProductPath::kKernel,
                                         tts::tacotron2::RecurrentProductPath::kGemm)));

namespace {

// attention_weights written with torch ops.
torch::Tensor composed_attention(const torch::Tensor& location, const torch::Tensor& processed,
                                 const torch::Tensor& query, const torch::Tensor& v,
                                 const torch::Tensor& mask) {
  torch::Tensor energies = torch::matmul(v, torch::tanh(location + processed + query.unsqueeze(2)));
  return torch::softmax(energies.masked_fill(mask, -std::numeric_limits<double>::infinity()), -1);
}

}  // namespace

// The float kernel, by each instruction set (AVX-512, AVX2 + FMA, portable), at
// shapes that leave every remainder: 1-9 and 17 rows, columns beyond a multiple of 16 and beyond
// one parallel chunk (2048), inner sizes beyond a multiple of the 16-row block; values and the
// input's gradient against torch::addmm in double.
class RecurrentProductIsa : public ::testing::TestWithParam<tts::tacotron2::StepKernelIsa> {
 protected:
  void TearDown() override {
    tts::tacotron2::set_step_kernel_isa(tts::tacotron2::StepKernelIsa::kBest);
  }
};

TEST_P(RecurrentProductIsa, FloatKernelMatchesAddmmAtShapesWithEveryRemainder) {
  torch::manual_seed(23);
  tts::tacotron2::set_step_kernel_isa(GetParam());
  for (int64_t rows : {1, 2, 3, 4, 5, 6, 7, 8, 9, 17}) {
    for (auto [in, out] : {std::pair<int64_t, int64_t>{37, 21}, {16, 2069}, {5, 16}, {9, 100}}) {
      torch::Tensor weight = torch::randn({out, in}, torch::requires_grad());
      torch::Tensor bias = torch::randn({out});
      torch::Tensor x = torch::randn({rows, in}, torch::requires_grad());
      tts::tacotron2::RecurrentWeight w =
          tts::tacotron2::make_step_weight(tts::tacotron2::RecurrentProductPath::kKernel, weight);
      torch::Tensor y = tts::tacotron2::recurrent_linear(w, bias, x);
      torch::Tensor probe = torch::randn({rows, out});
      torch::Tensor grad_x = torch::autograd::grad({(y * probe).sum()}, {x})[0];
      torch::Tensor xd = x.detach().to(torch::kDouble).requires_grad_();
      torch::Tensor yd =
          torch::addmm(bias.to(torch::kDouble), xd, weight.detach().to(torch::kDouble).t());
      torch::Tensor grad_xd =
          torch::autograd::grad({(yd * probe.to(torch::kDouble)).sum()}, {xd})[0];
      std::string where = "rows " + std::to_string(rows) + ", in " + std::to_string(in) + ", out " +
                          std::to_string(out);
      EXPECT_LT((y.to(torch::kDouble) - yd).abs().max().item<double>(), 1e-4) << where;
      EXPECT_LT((grad_x.to(torch::kDouble) - grad_xd).abs().max().item<double>(), 1e-3) << where;
    }
  }
}

// The kernel reads a weight's panels (made once per batch by make_step_weight) where they exist,
// and the weight itself where not: the same values bit for bit, forward and backward, on one
// thread or two (columns go to threads in whole tiles).
TEST_P(RecurrentProductIsa, PanelsAndThreadsChangeNoValue) {
  torch::manual_seed(29);
  tts::tacotron2::set_step_kernel_isa(GetParam());
  const int threads = at::get_num_threads();
  for (int64_t rows : {1, 4, 6, 7, 16}) {
    for (auto [in, out] : {std::pair<int64_t, int64_t>{37, 21}, {40, 2069}, {2100, 48}}) {
      torch::Tensor weight = torch::randn({out, in}, torch::requires_grad());
      torch::Tensor bias = torch::randn({out});
      torch::Tensor x = torch::randn({rows, in}, torch::requires_grad());
      torch::Tensor probe = torch::randn({rows, out});
      tts::tacotron2::RecurrentWeight with_panels =
          tts::tacotron2::make_step_weight(tts::tacotron2::RecurrentProductPath::kKernel, weight);
      // Made for the AVX2 and AVX-512 kernels, not for the portable loop.
#if TTS_X86_KERNELS
      EXPECT_EQ(with_panels.panels.defined() && with_panels.panels_t.defined(),
                GetParam() != tts::tacotron2::StepKernelIsa::kPortable && tts::cpu::has_avx2_fma());
#endif
      tts::tacotron2::RecurrentWeight without = with_panels;
      without.panels = without.panels_t = torch::Tensor();
      if (with_panels.panels_t.defined()) {  // the kernel reads them: other panels, other values
        tts::tacotron2::RecurrentWeight other = without;
        other.panels_t = torch::zeros_like(with_panels.panels_t);
        torch::NoGradGuard no_grad;
        EXPECT_FALSE(torch::equal(tts::tacotron2::recurrent_linear(other, bias, x),
                                  tts::tacotron2::recurrent_linear(without, bias, x)))
            << "rows " << rows;
      }
      std::vector<torch::Tensor> results;
      for (const auto* w : {&with_panels, &without}) {
        for (int n : {1, 2}) {
          at::set_num_threads(n);
          torch::Tensor y = tts::tacotron2::recurrent_linear(*w, bias, x);
          results.push_back(y.detach());
          results.push_back(torch::autograd::grad({(y * probe).sum()}, {x})[0]);
          at::set_num_threads(threads);
        }
      }
      std::string where = "rows " + std::to_string(rows) + ", in " + std::to_string(in) + ", out " +
                          std::to_string(out);
      for (size_t i = 2; i < results.size(); ++i) {
        EXPECT_TRUE(torch::equal(results[i], results[i % 2])) << where << ", result " << i;
      }
    }
  }
}

std::string isa_name(const ::testing::TestParamInfo<tts::tacotron2::StepKernelIsa>& info) {
  switch (info.param) {
    case tts::tacotron2::StepKernelIsa::kBest:
      return "Best";
    case tts::tacotron2::StepKernelIsa::kAvx2:
      return "AtMostAvx2";
    default:
      return "Portable";
  }
}

// The best path is the AVX-512 one on a CPU that has it (the build machine does), AVX2 on most
// others; each falls back to the next on a CPU without it.
INSTANTIATE_TEST_SUITE_P(Isa, RecurrentProductIsa,
                         ::testing::Values(tts::tacotron2::StepKernelIsa::kBest,
                                           tts::tacotron2::StepKernelIsa::kAvx2,
                                           tts::tacotron2::StepKernelIsa::kPortable),
                         isa_name);

TEST(AttentionWeights, MatchComposedOpsForwardAndBackward) {
  torch::manual_seed(23);
  auto options = torch::TensorOptions().dtype(torch::kDouble).requires_grad(true);
  torch::Tensor location = torch::randn({3, 5, 7}, options);
  torch::Tensor processed = torch::randn({3, 5, 7}, options);
  torch::Tensor query = torch::randn({3, 5}, options), v = torch::randn({1, 5}, options);
  torch::Tensor mask =
      tts::tacotron2::padding_mask(torch::tensor({7, 4, 1}, torch::kInt64), 7).unsqueeze(1);
  std::vector<torch::Tensor> inputs{location, processed, query, v};
  torch::Tensor upstream = torch::randn({3, 1, 7}, torch::kDouble);

  torch::Tensor fused = tts::tacotron2::attention_weights(location, processed, query, v, mask);
  auto fused_grads = torch::autograd::grad({(fused * upstream).sum()}, inputs);
  torch::Tensor reference = composed_attention(location, processed, query, v, mask);
  auto reference_grads = torch::autograd::grad({(reference * upstream).sum()}, inputs);
  EXPECT_TRUE(torch::allclose(fused, reference, 1e-12, 1e-12));
  EXPECT_EQ(fused.masked_select(mask).abs().max().item<double>(), 0.0);
  for (size_t i = 0; i < inputs.size(); ++i) {
    EXPECT_TRUE(torch::allclose(fused_grads[i], reference_grads[i], 1e-10, 1e-12)) << i;
  }
  // Shapes the kernel does not take (a mask broadcast over the batch) go through the composed
  // ops instead of being read out of bounds.
  torch::Tensor shared_mask = mask.narrow(0, 1, 1);  // [1, 1, 7]
  torch::Tensor broadcast =
      tts::tacotron2::attention_weights(location, processed, query, v, shared_mask);
  torch::Tensor expanded = tts::tacotron2::attention_weights(
      location, processed, query, v, shared_mask.expand({3, 1, 7}).contiguous());
  EXPECT_TRUE(torch::allclose(broadcast, expanded, 1e-12, 1e-12));
  // Its backward is a fused kernel: asking for a differentiable gradient is refused.
  torch::Tensor again = tts::tacotron2::attention_weights(location, processed, query, v, mask);
  EXPECT_THROW(torch::autograd::grad({(again * upstream).sum()}, inputs, {}, true, true),
               c10::Error);
}

// In float the kernel's tanh is a vectorized rational approximation: values and gradients within
// float rounding of the composed ops, over arguments from the linear range to saturation and a
// time axis that is not a multiple of the vector width.
TEST(AttentionWeights, FloatKernelMatchesComposedOps) {
  torch::manual_seed(24);
  auto options = torch::TensorOptions().dtype(torch::kFloat).requires_grad(true);
  torch::Tensor location = (4 * torch::randn({2, 6, 21})).requires_grad_();
  torch::Tensor processed = torch::randn({2, 6, 21}, options);
  torch::Tensor query = torch::randn({2, 6}, options), v = torch::randn({1, 6}, options);
  torch::Tensor mask =
      tts::tacotron2::padding_mask(torch::tensor({21, 13}, torch::kInt64), 21).unsqueeze(1);
  std::vector<torch::Tensor> inputs{location, processed, query, v};
  torch::Tensor upstream = torch::randn({2, 1, 21});
  torch::Tensor fused = tts::tacotron2::attention_weights(location, processed, query, v, mask);
  auto fused_grads = torch::autograd::grad({(fused * upstream).sum()}, inputs);
  torch::Tensor reference = composed_attention(location, processed, query, v, mask);
  auto reference_grads = torch::autograd::grad({(reference * upstream).sum()}, inputs);
  EXPECT_TRUE(torch::allclose(fused, reference, 1e-5, 1e-6));
  for (size_t i = 0; i < inputs.size(); ++i) {
    double scale = reference_grads[i].abs().max().item<double>();
    EXPECT_TRUE(torch::allclose(fused_grads[i], reference_grads[i], 1e-4, 1e-5 * scale)) << i;
  }
}

// The encoder's hand-written BiLSTM against torch::nn::LSTM over packed sequences: outputs and
// the gradients of the input and of every parameter, with padded items.
TEST(BidirectionalLSTM, MatchesTorchLSTMOverPackedSequences) {
  torch::manual_seed(24);
  torch::nn::LSTM lstm(torch::nn::LSTMOptions(6, 5).batch_first(true).bidirectional(true));
  lstm->to(torch::kDouble);
  torch::Tensor lengths = torch::tensor({7, 3, 5}, torch::kInt64);
  torch::Tensor valid = tts::tacotron2::padding_mask(lengths, 7).logical_not().unsqueeze(2);
  torch::Tensor x = (torch::randn({3, 7, 6}, torch::kDouble) * valid).requires_grad_(true);
  torch::Tensor upstream = torch::randn({3, 7, 10}, torch::kDouble);
  std::vector<torch::Tensor> inputs{x};
  for (const auto& p : lstm->parameters()) inputs.push_back(p);

  torch::Tensor ours = tts::tacotron2::bidirectional_lstm(
      lstm, x, lengths, tts::tacotron2::RecurrentProductPath::kKernel, RnnPadding::kMasked);
  auto our_grads = torch::autograd::grad({(ours * upstream).sum()}, inputs);
  namespace rnn_utils = torch::nn::utils::rnn;
  auto packed = rnn_utils::pack_padded_sequence(x, lengths, true, false);
  torch::Tensor reference = std::get<0>(rnn_utils::pad_packed_sequence(
      std::get<0>(lstm->forward_with_packed_input(packed)), true, 0.0, 7));
  auto reference_grads = torch::autograd::grad({(reference * upstream).sum()}, inputs);
  EXPECT_TRUE(torch::allclose(ours, reference, 1e-10, 1e-12));
  for (size_t i = 0; i < inputs.size(); ++i) {
    EXPECT_TRUE(torch::allclose(our_grads[i], reference_grads[i], 1e-10, 1e-12)) << i;
  }
}

// The CBHG's masked BiGRU (what a replayed CUDA graph runs) against torch::nn::GRU over packed
// sequences: outputs and the gradients of the input and of every parameter, with padded items.
TEST(BidirectionalGRU, MaskedMatchesTorchGRUOverPackedSequences) {
  torch::manual_seed(25);
  torch::nn::GRU gru(torch::nn::GRUOptions(6, 5).batch_first(true).bidirectional(true));
  gru->to(torch::kDouble);
  torch::Tensor lengths = torch::tensor({7, 3, 5, 1}, torch::kInt64);
  torch::Tensor valid = tts::tacotron2::padding_mask(lengths, 7).logical_not().unsqueeze(2);
  torch::Tensor x = (torch::randn({4, 7, 6}, torch::kDouble) * valid).requires_grad_(true);
  torch::Tensor upstream = torch::randn({4, 7, 10}, torch::kDouble);
  std::vector<torch::Tensor> inputs{x};
  for (const auto& p : gru->parameters()) inputs.push_back(p);
  std::vector<std::vector<torch::Tensor>> results;
  for (RnnPadding padding : {RnnPadding::kMasked, RnnPadding::kPacked}) {
    torch::Tensor out = tts::tacotron2::bidirectional_gru(gru, x, lengths, padding);
    std::vector<torch::Tensor> all{out};
    for (const auto& grad : torch::autograd::grad({(out * upstream).sum()}, inputs)) {
      all.push_back(grad);
    }
    results.push_back(all);
  }
  // Zero outputs at padding, as the packed result.
  EXPECT_EQ(results[0][0].masked_select(valid.logical_not()).abs().max().item<double>(), 0.0);
  for (size_t i = 0; i < results[0].size(); ++i) {
    EXPECT_TRUE(torch::allclose(results[0][i], results[1][i], 1e-10, 1e-12)) << i;
  }
}

// Where the model runs decides, once, how its RNNs keep the padding out; a model whose RNNs are
// all masked (a replayed CUDA graph's) trains as the CPU's: outputs and every parameter's
// gradient, the linear head's GRU included.
TEST(Tacotron2, MaskedRecurrencesGiveThePackedResult) {
  using tts::tacotron2::recurrence_paths;
  const torch::Device cpu(torch::kCPU), cuda(torch::kCUDA, 0);
  EXPECT_EQ(recurrence_paths(cpu, false).lstm, RnnPadding::kMasked);
  EXPECT_EQ(recurrence_paths(cpu, false).gru, RnnPadding::kPacked);
  EXPECT_EQ(recurrence_paths(cuda, false).lstm, RnnPadding::kPacked);
  EXPECT_EQ(recurrence_paths(cuda, false).gru, RnnPadding::kPacked);
  EXPECT_EQ(recurrence_paths(cuda, true).lstm, RnnPadding::kMasked);
  EXPECT_EQ(recurrence_paths(cuda, true).gru, RnnPadding::kMasked);

  Batch b = make_batch({7, 2, 5}, {9, 4, 6}, 1, 13);
  std::vector<std::vector<torch::Tensor>> results;
  for (bool masked : {false, true}) {
    torch::manual_seed(12);
    Tacotron2 model(without_dropout(small_options(1, true)), kSymbols, kMels, kLinear);
    model->to(torch::kDouble);
    model->eval();  // BatchNorm's running statistics: the same input gives the same output
    model->set_recurrence(masked ? recurrence_paths(cuda, true) : recurrence_paths(cpu, false));
    TacotronOutput out =
        model->forward(b.text, b.text_lengths, b.mel.to(torch::kDouble), b.mel_lengths);
    torch::Tensor loss = out.mel_postnet.sum() + out.linear.pow(2).sum() + out.gate.sum();
    std::vector<torch::Tensor> all{out.mel_postnet, out.linear, out.gate};
    const std::vector<torch::Tensor> parameters = model->parameters();
    for (const auto& grad : torch::autograd::grad({loss}, parameters)) all.push_back(grad);
    results.push_back(all);
  }
  // Two computations (the linear head's GRU differs in the order of its additions)...
  EXPECT_FALSE(torch::equal(results[0][1], results[1][1]));
  // ...of one function.
  for (size_t i = 0; i < results[0].size(); ++i) {
    EXPECT_TRUE(torch::allclose(results[0][i], results[1][i], 1e-9, 1e-11)) << i;
  }
}

// The CUDA paths (ATen's fused LSTM-cell kernel, cuDNN's BiLSTM, and the masked BiLSTM and BiGRU
// a replayed graph runs) give the CPU kernels' values and gradients. Run by
// scripts/gpu_check.sh; skipped without a GPU.
TEST(CudaPaths, LSTMCellPointwiseAndBidirectionalLSTMMatchTheCpu) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "needs a CUDA device";
  torch::manual_seed(31);
  const torch::Device cuda(torch::kCUDA, 0);
  auto grads_of = [](const std::vector<torch::Tensor>& outputs,
                     const std::vector<torch::Tensor>& weights,
                     const std::vector<torch::Tensor>& inputs) {
    torch::Tensor loss = torch::zeros({}, outputs[0].options());
    for (size_t i = 0; i < outputs.size(); ++i) {
      loss = loss + (outputs[i] * weights[i].to(outputs[i].device())).sum();
    }
    return torch::autograd::grad({loss}, inputs);
  };
  auto options = torch::TensorOptions().dtype(torch::kDouble);
  torch::Tensor gates = torch::randn({3, 20}, options), cell = torch::randn({3, 5}, options);
  torch::Tensor mask = torch::empty({3, 5}, options).bernoulli_(0.7).div_(0.7);
  std::vector<torch::Tensor> weights{torch::randn({3, 5}, options), torch::randn({3, 5}, options)};
  std::vector<std::vector<torch::Tensor>> results;
  for (const torch::Device& device : {torch::Device(torch::kCPU), cuda}) {
    torch::Tensor g = gates.to(device).requires_grad_(true),
                  c0 = cell.to(device).requires_grad_(true);
    auto [h, c] = tts::tacotron2::lstm_cell_pointwise(g, c0, mask.to(device));
    auto grads = grads_of({h, c}, weights, {g, c0});
    results.push_back({h.cpu(), c.cpu(), grads[0].cpu(), grads[1].cpu()});
  }
  for (size_t i = 0; i < results[0].size(); ++i) {
    EXPECT_TRUE(torch::allclose(results[0][i], results[1][i], 1e-9, 1e-11)) << "cell " << i;
  }

  torch::nn::LSTM lstm(torch::nn::LSTMOptions(6, 5).batch_first(true).bidirectional(true));
  lstm->to(torch::kDouble);
  torch::Tensor lengths = torch::tensor({7, 3, 5}, torch::kInt64);
  torch::Tensor valid = tts::tacotron2::padding_mask(lengths, 7).logical_not().unsqueeze(2);
  torch::Tensor x = torch::randn({3, 7, 6}, options) * valid;
  torch::Tensor upstream = torch::randn({3, 7, 10}, options);
  torch::nn::GRU gru(torch::nn::GRUOptions(6, 5).batch_first(true).bidirectional(true));
  gru->to(torch::kDouble);
  struct Path {
    torch::Device device;
    RnnPadding padding;
  };
  std::vector<std::vector<torch::Tensor>> lstm_results, gru_results;
  for (const Path& path : {Path{torch::kCPU, RnnPadding::kMasked}, Path{cuda, RnnPadding::kPacked},
                           Path{cuda, RnnPadding::kMasked}}) {
    lstm->to(path.device);
    gru->to(path.device);
    for (bool is_gru : {false, true}) {
      torch::Tensor input = x.to(path.device).requires_grad_(true);
      std::vector<torch::Tensor> inputs{input};
      for (const auto& p : is_gru ? gru->parameters() : lstm->parameters()) inputs.push_back(p);
      torch::Tensor out =
          is_gru
              ? tts::tacotron2::bidirectional_gru(gru, input, lengths.to(path.device), path.padding)
              : tts::tacotron2::bidirectional_lstm(lstm, input, lengths.to(path.device),
                                                   tts::tacotron2::RecurrentProductPath::kKernel,
                                                   path.padding);
      auto grads = grads_of({out}, {upstream}, inputs);
      std::vector<torch::Tensor> all{out.cpu()};
      for (const auto& grad : grads) all.push_back(grad.cpu());
      (is_gru ? gru_results : lstm_results).push_back(all);
    }
  }
  for (size_t path = 1; path < lstm_results.size(); ++path) {
    for (size_t i = 0; i < lstm_results[0].size(); ++i) {
      EXPECT_TRUE(torch::allclose(lstm_results[0][i], lstm_results[path][i], 1e-9, 1e-11))
          << "bilstm, path " << path << ", " << i;
      EXPECT_TRUE(torch::allclose(gru_results[0][i], gru_results[path][i], 1e-9, 1e-11))
          << "bigru, path " << path << ", " << i;
    }
  }
}

TEST(Tacotron2, KeyedInferenceDecodesAnItemTheSameAloneAndInABatch) {
  // The prenet's dropout stays on in inference; keyed by utterance (synthesize keys it by the
  // sentence), an item's masks are its own, so batched synthesis speaks each sentence as
  // one-at-a-time synthesis does, each stopping at its own gate.
  ModelOptions o = small_options(1, false);  // the prenet drops out at 0.5
  o.max_decoder_steps = 40;
  torch::manual_seed(11);
  Tacotron2 model(o, kSymbols, kMels, kLinear);
  model->eval();
  torch::NoGradGuard no_grad;
  parameter(model, "decoder.gate_layer.weight").normal_(0, 1.0);
  parameter(model, "decoder.gate_layer.bias").fill_(-1.0);
  Batch b = make_batch({7, 2, 5}, {4, 4, 4}, 1, 12);
  const std::vector<std::string> keys{"first sentence", "second", "third one"};
  const tts::models::KeyedDropout together(1234, 50, keys);
  tts::tacotron2::BatchContext context;
  context.dropout = &together;
  TacotronOutput batched = model->infer(b.text, b.text_lengths, context);
  std::set<int64_t> lengths;
  for (int64_t i = 0; i < 3; ++i) {
    const tts::models::KeyedDropout alone(1234, 50, {keys[static_cast<size_t>(i)]});
    tts::tacotron2::BatchContext single;
    single.dropout = &alone;
    const int64_t symbols = b.text_lengths[i].item<int64_t>();
    TacotronOutput one = model->infer(b.text[i].narrow(0, 0, symbols).unsqueeze(0),
                                      b.text_lengths.narrow(0, i, 1), single);
    const int64_t frames = one.mel_lengths[0].item<int64_t>();
    ASSERT_EQ(batched.mel_lengths[i].item<int64_t>(), frames) << i;
    lengths.insert(frames);
    EXPECT_TRUE(torch::allclose(batched.mel_postnet[i].narrow(0, 0, frames),
                                one.mel_postnet[0].narrow(0, 0, frames), 1e-5, 1e-6))
        << i;
    EXPECT_TRUE(torch::allclose(batched.gate[i].narrow(0, 0, frames),
                                one.gate[0].narrow(0, 0, frames), 1e-5, 1e-5));
  }
  EXPECT_GT(lengths.size(), 1u) << "the items should stop at different steps: "
                                << batched.mel_lengths;
  EXPECT_LT(*lengths.begin(), 40) << "some item should stop at its gate";
  // The masks are the keys': another key decodes otherwise, and libtorch's stream is not used.
  const tts::models::KeyedDropout other(1234, 51, keys);
  tts::tacotron2::BatchContext moved;
  moved.dropout = &other;
  TacotronOutput again = model->infer(b.text, b.text_lengths, context);
  EXPECT_TRUE(torch::equal(again.mel_postnet, batched.mel_postnet));
  EXPECT_FALSE(torch::equal(model->infer(b.text, b.text_lengths, moved).mel_postnet.narrow(1, 0, 1),
                            batched.mel_postnet.narrow(1, 0, 1)));
}
