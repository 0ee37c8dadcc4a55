// BatchNorm over the global batch: 2 Gloo ranks, each with half of a batch, give the outputs,
// the input and parameter gradients and the running statistics of 1 process with the whole batch;
// padding never counts; a bias given apart gets no gradient and the same output.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "../dist/fork_ranks.h"
#include "tts/dist/communicator.h"
#include "tts/models/global_batch_norm.h"

namespace tts::models {
namespace {

constexpr int64_t kChannels = 3;

// A batch of 4 utterances [4, C, 6] of lengths 6, 4, 5, 2, the same in every process.
struct Whole {
  torch::Tensor x, valid, upstream;
  Whole() {
    torch::manual_seed(7);
    x = torch::randn({4, kChannels, 6}) * 3 + 1;
    const torch::Tensor lengths = torch::tensor({6, 4, 5, 2});
    valid = (torch::arange(6).view({1, 1, 6}) < lengths.view({4, 1, 1})).to(torch::kFloat32);
    upstream = torch::randn({4, kChannels, 6});
  }
};

struct Result {
  torch::Tensor y, grad_x, grad_weight, grad_bias, running_mean, running_var;
};

// BatchNorm of rows [begin, end) of the whole batch, summed over `comm`'s ranks; the loss is
// sum(y * upstream * valid), scaled by `scale` (the reducer's convention: ranks' losses average).
Result run(dist::Communicator& comm, int64_t begin, int64_t end, double scale) {
  Whole whole;
  torch::nn::BatchNorm1d norm(kChannels);
  {
    torch::NoGradGuard no_grad;
    norm->weight.copy_(torch::tensor({0.5f, 1.5f, -1.0f}));
    norm->bias.copy_(torch::tensor({0.1f, -0.2f, 0.3f}));
  }
  norm->train();
  torch::Tensor x = whole.x.narrow(0, begin, end - begin).clone().requires_grad_(true);
  torch::Tensor valid = whole.valid.narrow(0, begin, end - begin);
  torch::Tensor y = global_batch_norm(*norm, x, valid, comm);
  ((y * whole.upstream.narrow(0, begin, end - begin) * valid).sum() * scale).backward();
  std::vector<torch::Tensor> grads{norm->weight.grad().clone(), norm->bias.grad().clone()};
  comm.all_reduce_sum(grads);  // the reducer's sum (then / ranks: scale did it)
  return {y.detach(),
          x.grad(),
          grads[0],
          grads[1],
          norm->running_mean.clone(),
          norm->running_var.clone()};
}

TEST(GlobalBatchNorm, TwoRanksWithHalfTheBatchEachComputeWhatOneProcessDoesWithAll) {
  auto codes = dist::testing::run_ranks(2, [](int rank) {
    torch::set_num_threads(1);
    config::DistributedOptions options;
    options.timeout_s = 30;
    auto comm =
        dist::make_communicator(dist::RankInfo::from_env(), options, config::Backend::kGloo);
    auto local = dist::make_communicator(dist::RankInfo{}, options, config::Backend::kGloo);
    const Result whole = run(*local, 0, 4, 1.0);
    // The ranks' losses are each scaled by the world size and their gradients averaged, so the
    // mean over ranks is the whole batch's.
    const int64_t begin = rank == 0 ? 0 : 2;
    const Result half = run(*comm, begin, begin + 2, 2.0);
    const double tolerance = 1e-5;
    EXPECT_TRUE(torch::allclose(half.y, whole.y.narrow(0, begin, 2), tolerance, tolerance));
    EXPECT_TRUE(
        torch::allclose(half.grad_x * 0.5, whole.grad_x.narrow(0, begin, 2), tolerance, tolerance));
    EXPECT_TRUE(torch::allclose(half.grad_weight / 2, whole.grad_weight, tolerance, tolerance));
    EXPECT_TRUE(torch::allclose(half.grad_bias / 2, whole.grad_bias, tolerance, tolerance));
    EXPECT_TRUE(torch::allclose(half.running_mean, whole.running_mean, tolerance, tolerance));
    EXPECT_TRUE(torch::allclose(half.running_var, whole.running_var, tolerance, tolerance));
  });
  EXPECT_EQ(codes, (std::vector<int>{0, 0}));
}

TEST(GlobalBatchNorm, StatisticsCoverTheRealPositionsOnlyAndPaddingNeverCounts) {
  auto local = dist::make_communicator(dist::RankInfo{}, config::DistributedOptions{},
                                       config::Backend::kGloo);
  Whole whole;
  torch::nn::BatchNorm1d norm(torch::nn::BatchNorm1dOptions(kChannels).affine(false));
  norm->train();
  torch::Tensor y = global_batch_norm(*norm, whole.x, whole.valid, *local);
  // Over the real positions: mean 0, biased variance 1 per channel.
  torch::Tensor real = (y * whole.valid);
  const double count = whole.valid.sum().item<double>();
  torch::Tensor mean = real.sum(std::vector<int64_t>{0, 2}) / count;
  torch::Tensor var = (real * real).sum(std::vector<int64_t>{0, 2}) / count;
  EXPECT_TRUE(torch::allclose(mean, torch::zeros({kChannels}), 1e-5, 1e-5)) << mean;
  EXPECT_TRUE(torch::allclose(var, torch::ones({kChannels}), 1e-4, 1e-4)) << var;
  // Anything in the padding changes nothing at the real positions.
  torch::Tensor noisy = whole.x + (1 - whole.valid) * 1e3;
  torch::Tensor again = global_batch_norm(*norm, noisy, whole.valid, *local);
  EXPECT_TRUE(torch::allclose(again * whole.valid, real, 1e-6, 1e-6));
}

TEST(GlobalBatchNorm, ABiasGivenApartHasTheSameOutputNoGradientAndGoesIntoTheRunningMean) {
  auto local = dist::make_communicator(dist::RankInfo{}, config::DistributedOptions{},
                                       config::Backend::kGloo);
  Whole whole;
  torch::Tensor bias = torch::tensor({2.0f, -1.0f, 0.5f}).requires_grad_(true);
  torch::nn::BatchNorm1d with_bias(kChannels), apart(kChannels);
  with_bias->train();
  apart->train();
  torch::Tensor a =
      global_batch_norm(*with_bias, whole.x + bias.detach().view({1, -1, 1}), whole.valid, *local);
  torch::Tensor b = global_batch_norm(*apart, whole.x, whole.valid, *local, bias);
  EXPECT_TRUE(torch::allclose(a, b, 1e-5, 1e-5));
  (b * whole.upstream).sum().backward();
  EXPECT_FALSE(bias.grad().defined());
  EXPECT_TRUE(torch::allclose(with_bias->running_mean, apart->running_mean, 1e-6, 1e-6));
  EXPECT_TRUE(torch::allclose(with_bias->running_var, apart->running_var, 1e-6, 1e-6));
  // Eval mode: the running statistics, and the bias added back.
  with_bias->eval();
  apart->eval();
  EXPECT_TRUE(torch::allclose(
      global_batch_norm(*with_bias, whole.x + bias.detach().view({1, -1, 1}), whole.valid, *local),
      global_batch_norm(*apart, whole.x, whole.valid, *local, bias.detach()), 1e-5, 1e-5));
}

}  // namespace
}  // namespace tts::models
