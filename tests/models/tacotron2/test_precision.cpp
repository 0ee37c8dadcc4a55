// train.precision = bf16 (include/tts/model/precision.h): autocast scopes nest and restore; under
// them the model's own nodes choose their dtypes as src/model/autocast.h says (recurrent products
// in bf16, LSTM cell state and attention in fp32, weight gradients summed in fp32); a whole
// forward and backward gives fp32 outputs, losses and gradients close to fp32's.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tts/config/config.h"
#include "tts/core/error.h"
#include "tts/models/tacotron2/layers/layers.h"
#include "tts/models/tacotron2/layers/network.h"
#include "tts/models/tacotron2/training/loss.h"
#include "tts/models/tacotron2/training/precision.h"

namespace {

using tts::train::AutocastScope;

const torch::Device kCpu(torch::kCPU);

// The dtype a matrix product of fp32 inputs comes out in now: bf16 exactly when autocast is on.
at::ScalarType product_dtype() {
  return torch::mm(torch::ones({2, 2}), torch::ones({2, 2})).scalar_type();
}

tts::config::ModelOptions model_options() {
  tts::config::ModelOptions o;
  o.symbols_embedding_dim = o.encoder_embedding_dim = 32;
  o.encoder_n_convolutions = 2;
  o.n_frames_per_step = 2;
  o.decoder_rnn_dim = 48;
  o.attention_rnn_dim = 40;
  o.prenet_dim = 16;
  o.attention_dim = 16;
  o.attention_location_n_filters = 4;
  o.attention_location_kernel_size = 7;
  o.postnet_embedding_dim = 16;
  o.postnet_n_convolutions = 3;
  o.p_encoder_dropout = o.p_prenet_dropout = o.p_attention_dropout = o.p_decoder_dropout =
      o.p_postnet_dropout = 0;
  return o;
}

// Cosine similarity of two lists of tensors, flattened and concatenated.
double cosine(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  std::vector<torch::Tensor> fa, fb;
  for (const auto& t : a) fa.push_back(t.reshape({-1}).to(torch::kDouble));
  for (const auto& t : b) fb.push_back(t.reshape({-1}).to(torch::kDouble));
  torch::Tensor x = torch::cat(fa), y = torch::cat(fb);
  return (x.dot(y) / (x.norm() * y.norm())).item<double>();
}

}  // namespace

TEST(AutocastScope, Bf16TurnsAutocastOnAndRestoresTheStateNested) {
  ASSERT_EQ(product_dtype(), torch::kFloat);
  {
    AutocastScope fp32(kCpu, tts::config::Precision::kFp32);  // does nothing
    EXPECT_EQ(product_dtype(), torch::kFloat);
  }
  {
    AutocastScope outer(kCpu, tts::config::Precision::kBf16);
    EXPECT_EQ(product_dtype(), torch::kBFloat16);
    {
      AutocastScope inner(kCpu, tts::config::Precision::kBf16);
      EXPECT_EQ(product_dtype(), torch::kBFloat16);
    }
    EXPECT_EQ(product_dtype(), torch::kBFloat16) << "the inner scope switched the outer one off";
  }
  EXPECT_EQ(product_dtype(), torch::kFloat);
  try {  // an exception inside the scope leaves autocast off too
    AutocastScope autocast(kCpu, tts::config::Precision::kBf16);
    throw std::runtime_error("inside");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(product_dtype(), torch::kFloat);
}

TEST(AutocastScope, ThisLibtorchCanRunBf16OnTheCpuAndOtherPrecisionsAreRefused) {
  tts::config::TrainOptions train;
  train.precision = tts::config::Precision::kBf16;
  EXPECT_NO_THROW(tts::train::check_precision(train.precision, kCpu));
  // Another precision is refused where the config is read, naming the file and line.
  try {
    tts::config::parse_config("train:\n  precision: fp16\n", "x.yaml", {});
    ADD_FAILURE() << "fp16 accepted";
  } catch (const tts::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("expected one of fp32, bf16"), std::string::npos)
        << e.what();
  }
  // A config with bf16 is valid (it was refused before autocast was implemented).
  tts::config::Config config =
      tts::config::parse_config("train:\n  precision: bf16\n", "x.yaml", {});
  EXPECT_EQ(config.train.precision, tts::config::Precision::kBf16);
}

TEST(Bf16Nodes, RecurrentLinearMultipliesInBf16AndSumsTheWeightGradientInFp32) {
  torch::manual_seed(3);
  torch::Tensor weight = torch::randn({24, 16}, torch::requires_grad());
  torch::Tensor bias = torch::randn({24}, torch::requires_grad());
  std::vector<torch::Tensor> inputs;
  for (int i = 0; i < 5; ++i) inputs.push_back(torch::randn({3, 16}, torch::requires_grad()));
  torch::Tensor probe = torch::randn({3, 24});

  auto run = [&](tts::config::Precision precision) {
    // The forward under autocast, the backward after it, as in training.
    std::optional<AutocastScope> autocast(std::in_place, kCpu, precision);
    tts::tacotron2::RecurrentWeight w =
        tts::tacotron2::make_step_weight(tts::tacotron2::RecurrentProductPath::kKernel, weight);
    EXPECT_EQ(w.gradient.sum.scalar_type(), torch::kFloat) << precision;
    torch::Tensor loss = torch::zeros({});
    std::vector<at::ScalarType> dtypes;
    for (const auto& x : inputs) {
      torch::Tensor y = tts::tacotron2::recurrent_linear(w, bias, x);
      dtypes.push_back(y.scalar_type());
      loss = loss + (y.to(torch::kFloat) * probe).sum();
    }
    autocast.reset();
    std::vector<torch::Tensor> grads = torch::autograd::grad({loss}, {weight, bias, inputs[0]});
    return std::make_tuple(w.weight.scalar_type(), dtypes, grads, loss.item<double>());
  };
  auto [w32, dtypes32, grads32, loss32] = run(tts::config::Precision::kFp32);
  auto [w16, dtypes16, grads16, loss16] = run(tts::config::Precision::kBf16);
  EXPECT_EQ(w32, torch::kFloat);
  EXPECT_EQ(w16, torch::kBFloat16);
  for (auto dtype : dtypes16) EXPECT_EQ(dtype, torch::kBFloat16);
  // The parameters' gradients come back in their own dtype, the input's in the input's.
  for (const auto& g : grads16) EXPECT_EQ(g.scalar_type(), torch::kFloat);
  EXPECT_NEAR(loss16, loss32, 2e-2 * std::abs(loss32) + 0.1);
  for (size_t i = 0; i < grads32.size(); ++i) {
    double scale = grads32[i].abs().max().item<double>();
    EXPECT_LT((grads16[i] - grads32[i]).abs().max().item<double>(), 2e-2 * scale) << i;
  }
}

TEST(Bf16Nodes, LstmCellAndAttentionComputeInFp32WhateverTheirInputs) {
  torch::manual_seed(4);
  AutocastScope autocast(kCpu, tts::config::Precision::kBf16);
  torch::Tensor gates = torch::randn({3, 20}).to(torch::kBFloat16).requires_grad_();
  torch::Tensor cell = torch::randn({3, 5});
  auto [h, c] = tts::tacotron2::lstm_cell_pointwise(gates, cell, {});
  EXPECT_EQ(h.scalar_type(), torch::kFloat);
  EXPECT_EQ(c.scalar_type(), torch::kFloat);
  (h.sum() + c.sum()).backward();
  EXPECT_EQ(gates.grad().scalar_type(), torch::kBFloat16);

  torch::Tensor location = torch::randn({2, 6, 9}).to(torch::kBFloat16);
  torch::Tensor processed = torch::randn({2, 6, 9}).to(torch::kBFloat16);
  torch::Tensor query = torch::randn({2, 6}).to(torch::kBFloat16);
  torch::Tensor v = torch::randn({1, 6});
  torch::Tensor mask = torch::zeros({2, 1, 9}, torch::kBool);
  mask[1].narrow(1, 6, 3).fill_(true);
  torch::Tensor weights = tts::tacotron2::attention_weights(location, processed, query, v, mask);
  EXPECT_EQ(weights.scalar_type(), torch::kFloat);
  EXPECT_TRUE(torch::allclose(weights.sum(-1), torch::ones({2, 1}), 1e-6, 1e-6));
  EXPECT_EQ(weights[1].narrow(1, 6, 3).abs().sum().item<double>(), 0.0);
}

// A whole training forward and backward in bf16 against fp32 from the same weights: fp32
// outputs and losses, an fp32 gradient for every parameter, all close to fp32's.
TEST(Bf16Model, ForwardAndBackwardGiveFp32LossesAndGradientsCloseToFp32s) {
  torch::manual_seed(5);
  torch::set_num_threads(1);
  // With the CBHG linear head too: its GRU runs through run_packed (layers.cpp).
  tts::config::ModelOptions options = model_options();
  options.predict_linear = true;
  options.cbhg_kernels = 3;
  options.cbhg_conv_channels = 8;
  options.cbhg_projection_dim = 12;
  options.cbhg_highway_layers = 1;
  options.cbhg_rnn_units = 8;
  tts::tacotron2::Tacotron2 model(options, 30, 16, 20);
  model->train();
  const int64_t batch = 3, text = 11, frames = 24;
  torch::Tensor text_ids = torch::randint(1, 30, {batch, text}, torch::kInt64);
  torch::Tensor text_lengths = torch::tensor({11, 9, 7}, torch::kInt64);
  torch::Tensor mel_lengths = torch::tensor({24, 20, 16}, torch::kInt64);
  tts::tacotron2::Targets targets{torch::randn({batch, frames, 16}), mel_lengths,
                                  torch::zeros({batch, frames}), torch::randn({batch, frames, 20})};
  for (int64_t b = 0; b < batch; ++b) {
    targets.stop[b].narrow(0, mel_lengths[b].item<int64_t>() - 1, 1).fill_(1);
  }
  tts::config::TrainOptions train;
  train.guided_attention_weight = 1.0;

  auto run = [&](tts::config::Precision precision) {
    train.precision = precision;
    model->zero_grad();
    tts::tacotron2::TacotronOutput out = tts::tacotron2::forward_in_precision(
        *model, text_ids, text_lengths, targets.mel, targets.mel_lengths, train.precision);
    for (const torch::Tensor* t :
         {&out.mel, &out.mel_postnet, &out.gate, &out.alignments, &out.linear}) {
      EXPECT_EQ(t->scalar_type(), torch::kFloat) << precision;
    }
    tts::tacotron2::LossParts loss = tts::tacotron2::compute_loss(
        out, targets, text_lengths, tts::tacotron2::loss_options(train));
    EXPECT_EQ(loss.total.scalar_type(), torch::kFloat);
    loss.total.backward();
    std::vector<torch::Tensor> grads;
    for (const auto& item : model->named_parameters()) {
      const torch::Tensor& g = item.value().grad();
      EXPECT_TRUE(g.defined()) << precision << " " << item.key();
      if (!g.defined()) continue;
      EXPECT_EQ(g.scalar_type(), torch::kFloat) << item.key();
      EXPECT_TRUE(torch::isfinite(g).all().item<bool>()) << precision << " " << item.key();
      grads.push_back(g.clone());
    }
    return std::make_pair(loss.total.item<double>(), grads);
  };
  auto [loss32, grads32] = run(tts::config::Precision::kFp32);
  auto [loss16, grads16] = run(tts::config::Precision::kBf16);
  ASSERT_EQ(grads32.size(), grads16.size());
  EXPECT_NEAR(loss16, loss32, 0.02 * loss32);
  EXPECT_GT(cosine(grads16, grads32), 0.99);
  // The parameters were not changed to bf16, and no autocast is left on.
  for (const auto& p : model->parameters()) EXPECT_EQ(p.scalar_type(), torch::kFloat);
  EXPECT_EQ(product_dtype(), torch::kFloat);
}
