// The fused decoder step (decoder_step.h) against the same step composed of the per-part nodes
// (recurrent_linear, lstm_cell_pointwise, attention_weights, conv1d, bmm, cat), as the decoder ran
// it before: values and every gradient over several chained steps.
#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "tts/core/error.h"
#include "tts/models/tacotron2/kernels/decoder_step.h"
#include "tts/models/tacotron2/layers/attention.h"
#include "tts/models/tacotron2/layers/decoder.h"
#include "tts/models/tacotron2/layers/layers.h"

namespace {

using tts::tacotron2::DecoderState;
using tts::tacotron2::RecurrentProductPath;
using tts::tacotron2::RecurrentWeight;
using tts::tacotron2::StepConstantGradients;

// The sizes of a test: small by default; the CUDA test adds one large enough for every loop and
// reduction of the kernels to take more than one pass.
struct Dims {
  int64_t batch = 3, time = 7, encoder = 6, attention_rnn = 5, decoder_rnn = 4, attention = 8,
          kernel = 5, steps = 4;
};

// The leaves every step reads, and each step's inputs.
struct Leaves {
  torch::Tensor attention_context_w, attention_hidden_w, query_w, decoder_w, decoder_bias, v,
      location, memory, processed, input_gates;
  torch::Tensor mask, attention_masks, decoder_masks, output_weights;
  Dims dims;
  std::vector<torch::Tensor> all() const {
    return {attention_context_w,
            attention_hidden_w,
            query_w,
            decoder_w,
            decoder_bias,
            v,
            location,
            memory,
            processed,
            input_gates};
  }
};

// Drawn on the CPU, then placed on `device`: the same values on every device.
Leaves make_leaves(torch::Dtype dtype, bool dropout,
                   const torch::Device& device = torch::Device(torch::kCPU), const Dims& d = {}) {
  const int64_t kBatch = d.batch, kTime = d.time, kEncoder = d.encoder,
                kAttentionRnn = d.attention_rnn, kDecoderRnn = d.decoder_rnn,
                kAttention = d.attention, kKernel = d.kernel, kSteps = d.steps;
  torch::manual_seed(7);
  auto o = torch::TensorOptions().dtype(dtype);
  auto leaf = [&](std::vector<int64_t> shape, double scale) {
    return (torch::randn(shape, o) * scale).to(device).requires_grad_(true);
  };
  Leaves l;
  l.attention_context_w = leaf({4 * kAttentionRnn, kEncoder}, 0.4);
  l.attention_hidden_w = leaf({4 * kAttentionRnn, kAttentionRnn}, 0.4);
  l.query_w = leaf({kAttention, kAttentionRnn}, 0.4);
  l.decoder_w = leaf({4 * kDecoderRnn, kAttentionRnn + kEncoder + kDecoderRnn}, 0.4);
  l.decoder_bias = leaf({4 * kDecoderRnn}, 0.2);
  l.v = leaf({kAttention}, 0.5);
  l.location = leaf({kAttention, 2, kKernel}, 0.3);
  l.memory = leaf({kBatch, kTime, kEncoder}, 1.0);
  l.processed = leaf({kBatch, kAttention, kTime}, 0.5);
  l.input_gates = leaf({kSteps, kBatch, 4 * kAttentionRnn}, 0.5);
  l.dims = d;
  // Text lengths T, T - 2, T - 4, ... (7, 5, 3 by default), at least 1.
  std::vector<int64_t> lengths;
  for (int64_t b = 0; b < kBatch; ++b) lengths.push_back(std::max<int64_t>(1, kTime - 2 * b));
  l.mask = torch::arange(kTime).unsqueeze(0) >= torch::tensor(lengths).unsqueeze(1);
  l.mask = l.mask.unsqueeze(1);
  if (dropout) {
    l.attention_masks = torch::empty({kSteps, kBatch, kAttentionRnn}, o).bernoulli_(0.9) / 0.9;
    l.decoder_masks = torch::empty({kSteps, kBatch, kDecoderRnn}, o).bernoulli_(0.9) / 0.9;
  }
  l.output_weights = torch::randn({7, kBatch, 2 * kTime + kEncoder + kAttentionRnn}, o);
  for (torch::Tensor* t : {&l.mask, &l.attention_masks, &l.decoder_masks, &l.output_weights}) {
    if (t->defined()) *t = t->to(device);
  }
  return l;
}

// A loss reading every output of every step, so that every gradient path is taken.
torch::Tensor read_outputs(const Leaves& l, const DecoderState& s, const torch::Tensor& weights,
                           int64_t step) {
  const torch::Tensor& w = l.output_weights;
  const int64_t kBatch = l.dims.batch, kTime = l.dims.time, kEncoder = l.dims.encoder,
                kAttentionRnn = l.dims.attention_rnn, kDecoderRnn = l.dims.decoder_rnn;
  torch::Tensor loss =
      (s.attention_h * w[0].narrow(1, 0, kAttentionRnn)).sum() +
      (s.attention_c * w[1].narrow(1, 0, kAttentionRnn)).sum() +
      (s.decoder_h * w[2].narrow(1, 0, kDecoderRnn)).sum() +
      (s.decoder_c * w[3].narrow(1, 0, kDecoderRnn)).sum() +
      (s.context * w[4].narrow(1, 0, kEncoder)).sum() +
      (weights.squeeze(1) * w[5].narrow(1, 0, kTime)).sum() +
      (s.weights_and_cumulative.reshape({kBatch, -1}) * w[6].narrow(1, 0, 2 * kTime)).sum();
  return loss * (1.0 + 0.1 * static_cast<double>(step));
}

DecoderState initial_state(const torch::TensorOptions& o, const Dims& d = {}) {
  const int64_t kBatch = d.batch, kTime = d.time, kEncoder = d.encoder,
                kAttentionRnn = d.attention_rnn, kDecoderRnn = d.decoder_rnn;
  return {torch::zeros({kBatch, kAttentionRnn}, o), torch::zeros({kBatch, kAttentionRnn}, o),
          torch::zeros({kBatch, kDecoderRnn}, o),   torch::zeros({kBatch, kDecoderRnn}, o),
          torch::zeros({kBatch, 2, kTime}, o),      torch::zeros({kBatch, kEncoder}, o)};
}

// The step as the decoder composed it of the per-part nodes.
torch::Tensor composed_step(const tts::tacotron2::detail::DecoderStepConstants& k,
                            const torch::Tensor& input_gates, const torch::Tensor& attention_mask,
                            const torch::Tensor& decoder_mask, DecoderState& s) {
  using namespace tts::tacotron2;
  torch::Tensor attention_gates =
      recurrent_linear(*k.attention_weight, input_gates, torch::cat({s.context, s.attention_h}, 1));
  std::tie(s.attention_h, s.attention_c) =
      lstm_cell_pointwise(attention_gates, s.attention_c, attention_mask);
  torch::Tensor query = recurrent_linear(*k.query_weight, {}, s.attention_h);
  torch::Tensor location = torch::conv1d(s.weights_and_cumulative, k.location, {}, 1, k.padding);
  torch::Tensor weights = attention_weights(location, k.processed_memory, query, k.v, k.mask);
  s.context = torch::bmm(weights, k.memory).squeeze(1);
  s.weights_and_cumulative =
      torch::cat({weights, s.weights_and_cumulative.narrow(1, 1, 1) + weights}, 1);
  torch::Tensor decoder_gates = recurrent_linear(
      *k.decoder_weight, k.decoder_bias, torch::cat({s.attention_h, s.context, s.decoder_h}, 1));
  std::tie(s.decoder_h, s.decoder_c) =
      lstm_cell_pointwise(decoder_gates, s.decoder_c, decoder_mask);
  return weights;
}

struct StepsRun {
  std::vector<torch::Tensor> values;
  std::vector<torch::Tensor> grads;
};

// fused: the fused node, else the composed step; shared: the constants' gradients summed by the
// steps (share_step_constants), as the decoder runs them.
StepsRun run(const Leaves& l, bool fused, RecurrentProductPath path, bool shared = false) {
  using namespace tts::tacotron2;
  RecurrentWeight attention = make_step_weight(path, l.attention_context_w, l.attention_hidden_w);
  RecurrentWeight query = make_step_weight(path, l.query_w);
  RecurrentWeight decoder = make_step_weight(path, l.decoder_w);
  torch::Tensor memory = l.memory, processed = l.processed, location = l.location, v = l.v,
                bias = l.decoder_bias;
  StepConstantGradients sums;
  if (shared) {
    tts::tacotron2::detail::share_step_constants(memory, processed, location, v, bias, sums);
    EXPECT_TRUE(sums.defined());
  }
  tts::tacotron2::detail::DecoderStepConstants k{
      memory,     processed, l.mask,   location,          v,   bias,
      &attention, &query,    &decoder, l.dims.kernel / 2, sums};
  DecoderState s = initial_state(l.memory.options().requires_grad(false), l.dims);
  StepsRun out;
  torch::Tensor loss = torch::zeros({}, l.memory.options());
  for (int64_t t = 0; t < l.dims.steps; ++t) {
    torch::Tensor attention_mask =
        l.attention_masks.defined() ? l.attention_masks[t] : torch::Tensor();
    torch::Tensor decoder_mask = l.decoder_masks.defined() ? l.decoder_masks[t] : torch::Tensor();
    torch::Tensor weights;
    if (fused) {
      EXPECT_TRUE(tts::tacotron2::detail::fused_decoder_step_applies(
          k, l.input_gates[t], attention_mask, decoder_mask, s));
      weights = tts::tacotron2::detail::fused_decoder_step(k, l.input_gates[t], attention_mask,
                                                           decoder_mask, s);
    } else {
      weights = composed_step(k, l.input_gates[t], attention_mask, decoder_mask, s);
    }
    loss = loss + read_outputs(l, s, weights, t);
    for (const torch::Tensor& v : {s.attention_h, s.attention_c, s.decoder_h, s.decoder_c,
                                   s.context, s.weights_and_cumulative, weights}) {
      out.values.push_back(v.detach().clone());
    }
  }
  std::vector<torch::Tensor> leaves = l.all();
  out.grads = torch::autograd::grad({loss}, leaves);
  return out;
}

class FusedDecoderStep
    : public ::testing::TestWithParam<std::tuple<bool, RecurrentProductPath, bool>> {};

TEST_P(FusedDecoderStep, MatchesTheComposedStepInDoubleValuesAndEveryGradient) {
  const auto [dropout, path, shared] = GetParam();
  const Leaves l = make_leaves(torch::kDouble, dropout);
  const StepsRun fused = run(l, true, path, shared);
  const StepsRun composed = run(l, false, path);
  ASSERT_EQ(fused.values.size(), composed.values.size());
  for (size_t i = 0; i < fused.values.size(); ++i) {
    EXPECT_TRUE(torch::allclose(fused.values[i], composed.values[i], 1e-12, 1e-13))
        << "output " << i % 7 << " of step " << i / 7;
  }
  const char* names[] = {"attention context weight",
                         "attention hidden weight",
                         "query weight",
                         "decoder weight",
                         "decoder bias",
                         "v",
                         "location",
                         "memory",
                         "processed memory",
                         "input gates"};
  for (size_t i = 0; i < fused.grads.size(); ++i) {
    ASSERT_TRUE(fused.grads[i].defined()) << names[i];
    EXPECT_GT(fused.grads[i].abs().max().item<double>(), 0.0) << names[i];
    EXPECT_TRUE(torch::allclose(fused.grads[i], composed.grads[i], 1e-11, 1e-12))
        << names[i] << ": max difference "
        << (fused.grads[i] - composed.grads[i]).abs().max().item<double>();
  }
}

INSTANTIATE_TEST_SUITE_P(DropoutProductsAndSharedConstants, FusedDecoderStep,
                         ::testing::Combine(::testing::Bool(),
                                            ::testing::Values(RecurrentProductPath::kKernel,
                                                              RecurrentProductPath::kGemm),
                                            ::testing::Bool()));

// The composed step on shared constants (a step the fused node does not take, as a decoder
// under another dtype would run it): the constants' node passes their gradients on.
TEST(FusedDecoderStepShared, ComposedStepsOnSharedConstantsGetTheSameGradients) {
  const Leaves l = make_leaves(torch::kDouble, true);
  const StepsRun shared = run(l, false, RecurrentProductPath::kKernel, true);
  const StepsRun plain = run(l, false, RecurrentProductPath::kKernel);
  for (size_t i = 0; i < shared.grads.size(); ++i) {
    EXPECT_TRUE(torch::allclose(shared.grads[i], plain.grads[i], 1e-12, 1e-13)) << i;
  }
}

TEST(FusedDecoderStepFloat, MatchesTheComposedStepWithinFloatRounding) {
  const Leaves l = make_leaves(torch::kFloat, true);
  const StepsRun fused = run(l, true, RecurrentProductPath::kKernel);
  const StepsRun composed = run(l, false, RecurrentProductPath::kKernel);
  for (size_t i = 0; i < fused.values.size(); ++i) {
    EXPECT_TRUE(torch::allclose(fused.values[i], composed.values[i], 1e-5, 1e-6)) << i;
  }
  for (size_t i = 0; i < fused.grads.size(); ++i) {
    EXPECT_TRUE(torch::allclose(fused.grads[i], composed.grads[i], 1e-4, 1e-5)) << i;
  }
}

// The fused step's CUDA kernels (decoder_step_kernels.cu) give the CPU kernels' values and every
// gradient over chained steps, with dropout and the shared constants, in double and in float.
// Run by scripts/gpu_check.sh; skipped without a GPU.
TEST(CudaPaths, FusedDecoderStepMatchesTheCpu) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "needs a CUDA device";
  const torch::Device cpu_device(torch::kCPU), cuda(torch::kCUDA, 0);
  // More text positions than a block has threads, more channels than warps, more units than a
  // block: every loop of the kernels takes several passes.
  // batch, time, encoder, attention_rnn, decoder_rnn, attention, kernel, steps
  const Dims large{5, 300, 24, 300, 260, 20, 31, 3};
  for (const Dims& dims : {Dims{}, large}) {
    for (torch::Dtype dtype : {torch::kDouble, torch::kFloat}) {
      const bool is_double = dtype == torch::kDouble;
      const StepsRun cpu =
          run(make_leaves(dtype, true, cpu_device, dims), true, RecurrentProductPath::kGemm, true);
      const StepsRun gpu =
          run(make_leaves(dtype, true, cuda, dims), true, RecurrentProductPath::kGemm, true);
      ASSERT_EQ(cpu.values.size(), gpu.values.size());
      for (size_t i = 0; i < cpu.values.size(); ++i) {
        EXPECT_TRUE(torch::allclose(cpu.values[i], gpu.values[i].cpu(), is_double ? 1e-11 : 1e-5,
                                    is_double ? 1e-12 : 1e-6))
            << "output " << i % 7 << " of step " << i / 7 << (is_double ? " (double)" : " (float)");
      }
      for (size_t i = 0; i < cpu.grads.size(); ++i) {
        ASSERT_TRUE(gpu.grads[i].defined()) << i;
        EXPECT_TRUE(torch::allclose(cpu.grads[i], gpu.grads[i].cpu(), is_double ? 1e-10 : 1e-4,
                                    is_double ? 1e-11 : 1e-5))
            << "gradient " << i << (is_double ? " (double)" : " (float)") << ": max difference "
            << (cpu.grads[i] - gpu.grads[i].cpu()).abs().max().item<double>();
      }
    }
  }
}

TEST(FusedDecoderStepApplies, OnlyToCpuTensorsOfOneFloatingTypeAndTheDecodersMaskShape) {
  using namespace tts::tacotron2;
  const Leaves l = make_leaves(torch::kFloat, false);
  RecurrentWeight attention =
      make_step_weight(RecurrentProductPath::kKernel, l.attention_context_w, l.attention_hidden_w);
  RecurrentWeight query = make_step_weight(RecurrentProductPath::kKernel, l.query_w);
  RecurrentWeight decoder = make_step_weight(RecurrentProductPath::kKernel, l.decoder_w);
  tts::tacotron2::detail::DecoderStepConstants k{l.memory, l.processed,      l.mask,     l.location,
                                                 l.v,      l.decoder_bias,   &attention, &query,
                                                 &decoder, l.dims.kernel / 2};
  DecoderState s = initial_state(torch::TensorOptions().dtype(torch::kFloat));
  EXPECT_TRUE(tts::tacotron2::detail::fused_decoder_step_applies(k, l.input_gates[0], {}, {}, s));
  // A state of another dtype: the composed nodes (which convert) run it.
  DecoderState mixed = s;
  mixed.context = mixed.context.to(torch::kDouble);
  EXPECT_FALSE(
      tts::tacotron2::detail::fused_decoder_step_applies(k, l.input_gates[0], {}, {}, mixed));
  // A broadcast mask.
  tts::tacotron2::detail::DecoderStepConstants broadcast = k;
  broadcast.mask = l.mask.narrow(0, 0, 1);
  EXPECT_FALSE(
      tts::tacotron2::detail::fused_decoder_step_applies(broadcast, l.input_gates[0], {}, {}, s));
  // Reduced precision.
  EXPECT_FALSE(tts::tacotron2::detail::fused_decoder_step_applies(
      k, l.input_gates[0].to(torch::kBFloat16), {}, {}, s));
}

// model.decoder_step is resolved once per model for its device: fused is the fused node on the
// CPU and composed on CUDA (whose fused kernels have not run on a GPU yet), fused_cuda the fused
// node everywhere, composed as asked; a decoder refuses an unresolved fused_cuda.
TEST(DecoderStepFor, FusedIsTheNodeOnTheCpuAndFusedCudaAlsoOnCuda) {
  using tts::config::DecoderStep;
  using tts::tacotron2::decoder_step_for;
  const torch::Device cpu(torch::kCPU), cuda(torch::kCUDA, 0);
  EXPECT_EQ(decoder_step_for(DecoderStep::kFused, cpu), DecoderStep::kFused);
  EXPECT_EQ(decoder_step_for(DecoderStep::kFused, cuda), DecoderStep::kComposed);
  EXPECT_EQ(decoder_step_for(DecoderStep::kFusedCuda, cpu), DecoderStep::kFused);
  EXPECT_EQ(decoder_step_for(DecoderStep::kFusedCuda, cuda), DecoderStep::kFused);
  EXPECT_EQ(decoder_step_for(DecoderStep::kComposed, cpu), DecoderStep::kComposed);
  EXPECT_EQ(decoder_step_for(DecoderStep::kComposed, cuda), DecoderStep::kComposed);
  EXPECT_EQ(tts::config::Tacotron2Options{}.decoder_step, DecoderStep::kFused);
  tts::tacotron2::Decoder decoder(tts::config::ModelOptions{}, 80);
  EXPECT_THROW(decoder->set_decoder_step(DecoderStep::kFusedCuda), tts::Error);
}

}  // namespace
