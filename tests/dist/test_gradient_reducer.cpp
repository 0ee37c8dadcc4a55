// The reducer against a single process: W ranks x B samples give the gradients and parameters of
// one process on the W*B concatenated batch, with unused parameters, a parameter only some ranks
// use, gradient accumulation and several buckets.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "fork_ranks.h"
#include "tts/dist/communicator.h"
#include "tts/dist/gradient_reducer.h"
#include "tts/dist/replicas.h"

namespace tts::dist {
namespace {

using testing::run_ranks;

struct Mlp : torch::nn::Module {
  Mlp() {
    hidden = register_module("hidden", torch::nn::Linear(8, 16));
    out = register_module("out", torch::nn::Linear(16, 4));
    extra = register_module("extra", torch::nn::Linear(4, 4));    // used by rank 0's shard only
    unused = register_module("unused", torch::nn::Linear(4, 4));  // never used (a head turned off)
  }
  // x: [batch, 8] -> [batch, 4]
  torch::Tensor forward(const torch::Tensor& x, bool use_extra) {
    torch::Tensor y = out->forward(torch::tanh(hidden->forward(x)));
    return use_extra ? extra->forward(y) : y;
  }
  torch::nn::Linear hidden{nullptr}, out{nullptr}, extra{nullptr}, unused{nullptr};
};

constexpr int kBatch = 5;  // per rank and micro-batch
constexpr int kSteps = 3;

// The loss of `shard` of micro-batch `micro` of `step`: the same data on every process.
torch::Tensor shard_loss(Mlp& net, int step, int micro, int shard) {
  torch::manual_seed(1000 * step + 100 * micro + shard);
  torch::Tensor x = torch::randn({kBatch, 8});
  torch::Tensor target = torch::randn({kBatch, 4});
  return torch::mse_loss(net.forward(x, shard == 0), target);
}

// What every rank of these tests starts with: one thread, a 30 s collective timeout, and its Gloo
// communicator from the launcher's environment (fork_ranks.h).
config::DistributedOptions rank_options() {
  torch::set_num_threads(1);
  config::DistributedOptions options;
  options.timeout_s = 30;
  return options;
}

std::unique_ptr<Communicator> rank_communicator(const config::DistributedOptions& options) {
  return make_communicator(RankInfo::from_env(), options, tts::config::Backend::kGloo);
}

double max_relative_difference(const torch::Tensor& a, const torch::Tensor& b) {
  return ((a - b).abs().max() / b.abs().max().clamp_min(1e-12)).item<double>();
}

struct Case {
  int world;
  int micro_batches;  // gradient accumulation
  double bucket_mb;   // tiny buckets split the 300 parameters into several
};

class Reducer : public ::testing::TestWithParam<Case> {};

TEST_P(Reducer, MatchesOneProcessOnTheConcatenatedBatch) {
  const Case c = GetParam();
  auto codes = run_ranks(c.world, [c](int rank) {
    config::DistributedOptions options = rank_options();
    options.bucket_mb = c.bucket_mb;
    options.first_bucket_mb = c.bucket_mb / 2;
    auto comm = rank_communicator(options);

    torch::manual_seed(rank);
    Mlp net;
    broadcast_parameters(net, *comm);
    Mlp reference;  // rank 0 only: one process, all shards
    {
      torch::NoGradGuard no_grad;
      auto src = net.parameters(), dst = reference.parameters();
      for (size_t i = 0; i < src.size(); ++i) dst[i].copy_(src[i]);
    }
    GradientReducer reducer(net.parameters(), *comm, options);
    if (c.bucket_mb < 0.001) {
      EXPECT_GT(reducer.bucket_sizes().size(), 2u);
    }
    torch::optim::SGD optimizer(net.parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
    torch::optim::SGD reference_optimizer(reference.parameters(),
                                          torch::optim::SGDOptions(0.1).momentum(0.9));

    for (int step = 0; step < kSteps; ++step) {
      optimizer.zero_grad();
      for (int micro = 0; micro < c.micro_batches; ++micro) {
        reducer.begin_step(micro == c.micro_batches - 1);
        (shard_loss(net, step, micro, rank) / c.micro_batches).backward();
      }
      reducer.finish_step();
      EXPECT_GE(reducer.last_exposed_comm_seconds(), 0.0);
      EXPECT_FALSE(net.unused->weight.grad().defined()) << "no rank used it: no gradient";
      ASSERT_TRUE(net.extra->weight.grad().defined()) << "rank 0 used it: every rank gets it";

      if (rank == 0) {
        reference_optimizer.zero_grad();
        for (int micro = 0; micro < c.micro_batches; ++micro) {
          for (int shard = 0; shard < c.world; ++shard) {
            (shard_loss(reference, step, micro, shard) / (c.micro_batches * c.world)).backward();
          }
        }
        auto named = net.named_parameters();
        auto ref = reference.named_parameters();
        for (const auto& item : named) {
          const torch::Tensor& g = item.value().grad();
          const torch::Tensor& rg = ref[item.key()].grad();
          ASSERT_EQ(g.defined(), rg.defined()) << item.key();
          if (g.defined()) {
            EXPECT_LE(max_relative_difference(g, rg), 1e-5) << item.key() << " step " << step;
          }
        }
        reference_optimizer.step();
      }
      optimizer.step();
    }
    check_replicas(net, *comm, kSteps);
    if (rank == 0) {
      auto ref = reference.named_parameters();
      for (const auto& item : net.named_parameters()) {
        EXPECT_LE(max_relative_difference(item.value(), ref[item.key()]), 1e-5) << item.key();
      }
    }
  });
  for (int r = 0; r < c.world; ++r) EXPECT_EQ(codes[r], 0) << "rank " << r;
}

INSTANTIATE_TEST_SUITE_P(Cases, Reducer,
                         ::testing::Values(Case{2, 1, 25.0}, Case{3, 1, 25.0}, Case{2, 3, 25.0},
                                           Case{3, 2, 0.0004}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return "world" + std::to_string(info.param.world) + "_micro" +
                                  std::to_string(info.param.micro_batches) +
                                  (info.param.bucket_mb < 1 ? "_tiny_buckets" : "_one_bucket");
                         });

// A stop wish of one rank (a signal that reached only it) rides on the step's all-reduce: every
// rank sees it at the same read point (settle()), with no collective of its own; under
// accumulation only the reducing micro-batch carries it.
TEST(ReducerStop, OneRanksWishReachesEveryRankAtTheSameStep) {
  auto codes = run_ranks(3, [](int rank) {
    const config::DistributedOptions options = rank_options();
    auto comm = rank_communicator(options);
    torch::manual_seed(0);
    Mlp net;
    GradientReducer reducer(net.parameters(), *comm, options);
    for (int step = 0; step < 4; ++step) {
      reducer.begin_step(false);
      shard_loss(net, step, 0, rank).backward();
      reducer.finish_step(rank == 1);
      EXPECT_EQ(reducer.stop_agreed(), rank == 1) << "a non-reducing micro-batch: own wish only";
      reducer.begin_step(true);
      shard_loss(net, step, 1, rank).backward();
      reducer.finish_step(step == 2 && rank == 1);
      reducer.settle();  // a read point: the agreed wish stays on the device until one
      EXPECT_EQ(reducer.stop_agreed(), step == 2) << "rank " << rank << " step " << step;
    }
  });
  for (int r = 0; r < 3; ++r) EXPECT_EQ(codes[r], 0) << "rank " << r;
}

// Which parameters a step uses is learned from the first reducing step (Note [Used
// parameters]): later, a parameter learned as used gets a zero gradient in a step no rank used it
// in, and used_mask() says so on the device (the optimizer leaves it alone); one learned as unused
// that gets a gradient later is noticed at settle() and learned again.
TEST(ReducerUsed, LearnedOnceThenMaskedOnTheDeviceAndLearnedAgainWhenItChanges) {
  auto codes = run_ranks(2, [](int rank) {
    const config::DistributedOptions options = rank_options();
    auto comm = rank_communicator(options);
    torch::Tensor a = torch::ones({3}, torch::requires_grad());  // used at every step
    torch::Tensor b = torch::ones({2}, torch::requires_grad());  // used at step 0 only
    torch::Tensor c = torch::ones({4}, torch::requires_grad());  // by rank 1 from step 2 on
    GradientReducer reducer({a, b, c}, *comm, options);
    auto mask_is = [&](std::vector<double> want) {
      return torch::equal(reducer.used_mask({a, b, c}), torch::tensor(want, torch::kFloat64));
    };
    for (int step = 0; step < 4; ++step) {
      for (torch::Tensor* p : {&a, &b, &c}) p->mutable_grad() = torch::Tensor();
      reducer.begin_step(true);
      torch::Tensor loss = (a * static_cast<double>(rank + 1)).sum();
      if (step == 0) loss = loss + b.sum();
      if (step >= 2 && rank == 1) loss = loss + c.sum();
      loss.backward();
      reducer.finish_step();
      ASSERT_TRUE(a.grad().defined());
      EXPECT_TRUE(torch::allclose(a.grad(), torch::full({3}, 1.5))) << "step " << step;
      if (step == 0) {
        EXPECT_TRUE(mask_is({1, 1, 0}));
        EXPECT_FALSE(c.grad().defined());
      } else if (step == 1) {
        ASSERT_TRUE(b.grad().defined()) << "learned as used: the reduced (zero) gradient";
        EXPECT_EQ(b.grad().abs().sum().item<float>(), 0.0f);
        EXPECT_TRUE(mask_is({1, 0, 0})) << "no rank used b in this step";
      } else if (step == 2) {
        EXPECT_FALSE(c.grad().defined()) << "learned as unused: dropped until the read point";
        reducer.settle();
      } else {
        ASSERT_TRUE(c.grad().defined()) << "learned again after the read point";
        EXPECT_TRUE(torch::allclose(c.grad(), torch::full({4}, 0.5)));
        EXPECT_FALSE(b.grad().defined());
        EXPECT_TRUE(mask_is({1, 0, 1}));
      }
    }
  });
  for (int r = 0; r < 2; ++r) EXPECT_EQ(codes[r], 0) << "rank " << r;
}

TEST(ReducerBuckets, FirstBucketIsSmallerAndOrderIsReverseRegistration) {
  // One rank, in a child process like the others (the test process itself runs no torch code).
  auto codes = run_ranks(1, [](int) {
    config::DistributedOptions options;
    options.bucket_mb = 0.0004;        // 100 floats
    options.first_bucket_mb = 0.0001;  // 25 floats
    auto comm = make_communicator(RankInfo{}, options, tts::config::Backend::kGloo);
    std::vector<torch::Tensor> params{
        torch::zeros({60}, torch::requires_grad()), torch::zeros({50}, torch::requires_grad()),
        torch::zeros({40}, torch::requires_grad()), torch::zeros({10}, torch::requires_grad()),
        torch::zeros({20})};  // frozen: skipped
    GradientReducer reducer(params, *comm, options);
    // Reverse order: 10 | 40 50 (90 <= 100) | 60.
    EXPECT_EQ(reducer.bucket_sizes(), (std::vector<int64_t>{10, 90, 60}));
  });
  EXPECT_EQ(codes[0], 0);
}

}  // namespace
}  // namespace tts::dist
