// DeviceAdam and clip_grad_norm against libtorch's Adam, AdamW and clip_grad_norm_: bit-identical
// weights, moments, step counts, norms and gradients over several steps, in float and double;
// an update that is not kept leaves everything exactly as it was.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "tts/train/device_adam.h"

namespace {

enum class Kind { kAdam, kAdamW };

struct Case {
  Kind kind;
  torch::ScalarType dtype;
  double weight_decay;
  bool amsgrad;
};

std::vector<torch::Tensor> make_parameters(torch::ScalarType dtype) {
  torch::manual_seed(3);
  std::vector<torch::Tensor> out;
  for (auto shape : std::vector<std::vector<int64_t>>{{7, 5}, {33}, {3, 4, 2}, {}}) {
    out.push_back(torch::randn(shape, torch::TensorOptions().dtype(dtype)).requires_grad_(true));
  }
  return out;
}

std::unique_ptr<torch::optim::Optimizer> make(const Case& c,
                                              const std::vector<torch::Tensor>& parameters) {
  if (c.kind == Kind::kAdamW) {
    return std::make_unique<torch::optim::AdamW>(parameters, torch::optim::AdamWOptions(1e-3)
                                                                 .betas({0.9, 0.999})
                                                                 .eps(1e-8)
                                                                 .weight_decay(c.weight_decay)
                                                                 .amsgrad(c.amsgrad));
  }
  return std::make_unique<torch::optim::Adam>(parameters, torch::optim::AdamOptions(1e-3)
                                                              .betas({0.9, 0.999})
                                                              .eps(1e-8)
                                                              .weight_decay(c.weight_decay)
                                                              .amsgrad(c.amsgrad));
}

// The gradients of step `s`: parameter 1 has none on step 2 (its state and step count lag).
void set_grads(std::vector<torch::Tensor>& parameters, int s) {
  torch::manual_seed(100 + s);
  for (size_t i = 0; i < parameters.size(); ++i) {
    torch::Tensor g = torch::randn(parameters[i].sizes(), parameters[i].options()) * (1.0 + s);
    parameters[i].mutable_grad() = (i == 1 && s == 2) ? torch::Tensor() : g;
  }
}

template <class State>
void expect_state_equal(torch::optim::Optimizer& want, torch::optim::Optimizer& got,
                        const std::vector<torch::Tensor>& want_p,
                        const std::vector<torch::Tensor>& got_p) {
  for (size_t i = 0; i < want_p.size(); ++i) {
    EXPECT_TRUE(torch::equal(want_p[i], got_p[i])) << "parameter " << i;
  }
  ASSERT_EQ(want.state().size(), got.state().size());
  // States by parameter order (their keys differ between the two optimizers).
  std::vector<State*> a, b;
  for (auto& [key, state] : want.state()) a.push_back(static_cast<State*>(state.get()));
  for (auto& [key, state] : got.state()) b.push_back(static_cast<State*>(state.get()));
  auto by_shape = [](std::vector<State*>& v) {
    std::sort(v.begin(), v.end(),
              [](State* x, State* y) { return x->exp_avg().numel() < y->exp_avg().numel(); });
  };
  by_shape(a);
  by_shape(b);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i]->step(), b[i]->step()) << "state " << i;
    EXPECT_TRUE(torch::equal(a[i]->exp_avg(), b[i]->exp_avg())) << "state " << i;
    EXPECT_TRUE(torch::equal(a[i]->exp_avg_sq(), b[i]->exp_avg_sq())) << "state " << i;
    if (a[i]->max_exp_avg_sq().defined()) {
      EXPECT_TRUE(torch::equal(a[i]->max_exp_avg_sq(), b[i]->max_exp_avg_sq())) << "state " << i;
    }
  }
}

class DeviceAdamCases : public ::testing::TestWithParam<Case> {};

TEST_P(DeviceAdamCases, MatchesLibtorchBitForBitAndASkippedStepChangesNothing) {
  const Case c = GetParam();
  std::vector<torch::Tensor> want_p = make_parameters(c.dtype);
  std::vector<torch::Tensor> got_p = make_parameters(c.dtype);
  auto want = make(c, want_p);
  auto got = make(c, got_p);
  tts::train::DeviceAdam adam(*got);
  const double lrs[] = {1e-3, 3e-3, 2e-3, 5e-4, 1e-2, 7e-3};
  for (int s = 0; s < 6; ++s) {
    set_grads(want_p, s);
    set_grads(got_p, s);
    for (auto& group : want->param_groups()) group.options().set_lr(lrs[s]);
    want->step();
    torch::Tensor kept = adam.step(lrs[s], torch::ones({}, torch::kBool));
    EXPECT_TRUE(kept.item<bool>()) << "step " << s;
    if (s == 3) {
      // A step not kept (the caller's flag, then a NaN gradient) changes nothing.
      std::vector<torch::Tensor> before;
      for (auto& p : got_p) before.push_back(p.detach().clone());
      set_grads(got_p, 9);
      EXPECT_FALSE(adam.step(0.5, torch::zeros({}, torch::kBool)).item<bool>());
      got_p[2].mutable_grad().view(-1)[0] = NAN;
      EXPECT_FALSE(adam.step(0.5).item<bool>());
      for (size_t i = 0; i < before.size(); ++i) EXPECT_TRUE(torch::equal(before[i], got_p[i]));
    }
  }
  adam.write_back();
  if (c.kind == Kind::kAdamW) {
    expect_state_equal<torch::optim::AdamWParamState>(*want, *got, want_p, got_p);
  } else {
    expect_state_equal<torch::optim::AdamParamState>(*want, *got, want_p, got_p);
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, DeviceAdamCases,
                         ::testing::Values(Case{Kind::kAdam, torch::kFloat32, 0.0, false},
                                           Case{Kind::kAdam, torch::kFloat64, 0.0, false},
                                           Case{Kind::kAdam, torch::kFloat32, 0.01, false},
                                           Case{Kind::kAdam, torch::kFloat32, 0.0, true},
                                           Case{Kind::kAdamW, torch::kFloat32, 0.01, false},
                                           Case{Kind::kAdamW, torch::kFloat64, 0.01, false},
                                           Case{Kind::kAdamW, torch::kFloat32, 0.0, false}));

// A parameter left out on the device (a distributed step in which no rank used it: it holds a
// zero gradient) is updated as libtorch's Adam leaves a parameter without a gradient.
TEST(DeviceAdam, APartLeftOutOnTheDeviceIsAParameterWithoutAGradient) {
  const Case c{Kind::kAdam, torch::kFloat32, 0.0, false};
  std::vector<torch::Tensor> want_p = make_parameters(c.dtype);
  std::vector<torch::Tensor> got_p = make_parameters(c.dtype);
  auto want = make(c, want_p);
  auto got = make(c, got_p);
  tts::train::DeviceAdam adam(*got);
  for (int s = 0; s < 4; ++s) {
    set_grads(want_p, s);  // parameter 1 has none on step 2
    set_grads(got_p, s);
    torch::Tensor part = torch::ones({4}, torch::kFloat64);
    if (s == 2) {
      got_p[1].mutable_grad() = torch::zeros_like(got_p[1]);
      part[1] = 0;
    }
    for (auto& group : want->param_groups()) group.options().set_lr(1e-2);
    want->step();
    EXPECT_TRUE(adam.step(1e-2, {}, part).item<bool>());
  }
  adam.write_back();
  expect_state_equal<torch::optim::AdamParamState>(*want, *got, want_p, got_p);
}

TEST(DeviceAdam, AFirstStepNotKeptLeavesNoState) {
  std::vector<torch::Tensor> p = make_parameters(torch::kFloat32);
  auto optimizer = make(Case{Kind::kAdam, torch::kFloat32, 0.0, false}, p);
  tts::train::DeviceAdam adam(*optimizer);
  set_grads(p, 0);
  EXPECT_FALSE(adam.step(1e-3, torch::zeros({}, torch::kBool)).item<bool>());
  adam.write_back();
  EXPECT_TRUE(optimizer->state().empty()) << "as if libtorch's step had never run";
}

TEST(ClipGradNorm, MatchesLibtorchBitForBitAndLeavesTheNormOnTheDevice) {
  for (double max_norm : {0.5, 1e9, static_cast<double>(INFINITY)}) {
    std::vector<torch::Tensor> want = make_parameters(torch::kFloat32);
    std::vector<torch::Tensor> got = make_parameters(torch::kFloat32);
    set_grads(want, 2);
    set_grads(got, 2);
    const double want_norm = torch::nn::utils::clip_grad_norm_(want, max_norm);
    const torch::Tensor got_norm = tts::train::clip_grad_norm(got, max_norm);
    EXPECT_EQ(got_norm.dim(), 0);
    EXPECT_EQ(got_norm.item<double>(), want_norm) << max_norm;
    for (size_t i = 0; i < want.size(); ++i) {
      if (!want[i].grad().defined()) {
        EXPECT_FALSE(got[i].grad().defined());
        continue;
      }
      EXPECT_TRUE(torch::equal(want[i].grad(), got[i].grad())) << i << " at " << max_norm;
    }
  }
  std::vector<torch::Tensor> none = make_parameters(torch::kFloat32);
  EXPECT_EQ(tts::train::clip_grad_norm(none, 1.0).item<double>(), 0.0);
}

}  // namespace
