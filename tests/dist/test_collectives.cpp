// Collectives, replica checks and config fingerprints with 2 and 3 real Gloo ranks on loopback.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "../support/error_of.h"
#include "fork_ranks.h"
#include "tts/core/error.h"
#include "tts/dist/communicator.h"
#include "tts/dist/replicas.h"

namespace tts::dist {
namespace {

using tts::test::error_of;

using testing::run_ranks;

std::unique_ptr<Communicator> connect(double timeout_s = 30.0) {
  torch::set_num_threads(1);
  config::DistributedOptions options;
  options.timeout_s = timeout_s;
  return make_communicator(RankInfo::from_env(), options, tts::config::Backend::kGloo);
}

class Collectives : public ::testing::TestWithParam<int> {};

TEST_P(Collectives, AllReduceBroadcastBarrierAllGatherGiveTheExpectedValues) {
  const int world = GetParam();
  auto codes = run_ranks(world, [world](int rank) {
    auto comm = connect();
    ASSERT_EQ(comm->rank(), rank);
    ASSERT_EQ(comm->size(), world);
    EXPECT_EQ(comm->backend(), "gloo");

    // Several tensors of different shapes and dtypes in one call.
    std::vector<torch::Tensor> t{torch::full({2, 3}, rank + 1.0),
                                 torch::arange(5, torch::kFloat64) * (rank + 1),
                                 torch::full({1}, rank, torch::kInt64)};
    comm->all_reduce_sum(t);
    const double ranks_sum = world * (world + 1) / 2.0;
    EXPECT_TRUE(torch::allclose(t[0], torch::full({2, 3}, ranks_sum)));
    EXPECT_TRUE(torch::allclose(t[1], torch::arange(5, torch::kFloat64) * ranks_sum));
    EXPECT_EQ(t[2].item<int64_t>(), world * (world - 1) / 2);

    // Asynchronous, on a non-contiguous view (written back through the view).
    torch::Tensor base = torch::zeros({4, 4});
    base.fill_(rank);
    std::vector<torch::Tensor> column{base.select(1, 2)};
    auto pending = comm->all_reduce_sum_async(column);
    pending->wait();
    EXPECT_TRUE(torch::allclose(base.select(1, 2), torch::full({4}, world * (world - 1) / 2.0)));
    EXPECT_TRUE(torch::allclose(base.select(1, 1), torch::full({4}, static_cast<double>(rank))));

    // Broadcast from the last rank.
    std::vector<torch::Tensor> b{torch::full({3}, 10.0 * rank)};
    comm->broadcast(b, world - 1);
    EXPECT_TRUE(torch::allclose(b[0], torch::full({3}, 10.0 * (world - 1))));

    comm->barrier();

    const std::vector<double> all = comm->all_gather({rank * 1.5, -1.0 * rank});
    ASSERT_EQ(all.size(), 2u * world);
    for (int r = 0; r < world; ++r) {
      EXPECT_EQ(all[2 * r], r * 1.5);
      EXPECT_EQ(all[2 * r + 1], -1.0 * r);
    }
  });
  for (int r = 0; r < world; ++r) EXPECT_EQ(codes[r], 0) << "rank " << r;
}

struct Net : torch::nn::Module {
  Net() {
    first = register_module("first", torch::nn::Linear(4, 6));
    second = register_module("second", torch::nn::Linear(6, 2));
    norm = register_module("norm", torch::nn::BatchNorm1d(6));
  }
  torch::nn::Linear first{nullptr}, second{nullptr};
  torch::nn::BatchNorm1d norm{nullptr};
};

TEST_P(Collectives, BroadcastParametersMakesReplicasIdenticalAndCheckReplicasCatchesDrift) {
  const int world = GetParam();
  auto codes = run_ranks(world, [world](int rank) {
    auto comm = connect();
    torch::manual_seed(100 + rank);  // every rank starts different
    Net net;
    net.norm->running_mean.fill_(rank);
    broadcast_parameters(net, *comm);
    const std::vector<double> firsts = comm->all_gather(
        {net.first->weight[0][0].item<double>(), net.norm->running_mean[0].item<double>()});
    for (int r = 1; r < world; ++r) {
      EXPECT_EQ(firsts[2 * r], firsts[0]);
      EXPECT_EQ(firsts[2 * r + 1], 0.0) << "buffers come from rank 0 too";
    }
    EXPECT_EQ(error_of([&] { check_replicas(net, *comm, 5); }), "");

    if (rank == world - 1) {
      torch::NoGradGuard no_grad;
      net.second->bias[1] += 1e-6;
    }
    const std::string message = error_of([&] { check_replicas(net, *comm, 7); });
    EXPECT_NE(message.find("step 7"), std::string::npos) << message;
    EXPECT_NE(message.find("'second.bias'"), std::string::npos) << message;
    EXPECT_NE(message.find("rank(s) " + std::to_string(world - 1)), std::string::npos) << message;
  });
  for (int r = 0; r < world; ++r) EXPECT_EQ(codes[r], 0) << "rank " << r;
}

TEST_P(Collectives, MismatchedConfigFingerprintsAreDetectedOnEveryRankNamingTheRank) {
  const int world = GetParam();
  auto codes = run_ranks(world, [world](int rank) {
    auto comm = connect();
    EXPECT_NO_THROW(check_same_config("train:\n  batch_size: 16\n", *comm));
    const std::string mine =
        rank == 1 ? "train:\n  batch_size: 32\n" : "train:\n  batch_size: 16\n";
    try {
      check_same_config(mine, *comm);
      ADD_FAILURE() << "no error on rank " << rank;
    } catch (const UsageError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("rank(s) 1 differs from rank 0"), std::string::npos) << message;
    }
    (void)world;
  });
  for (int r = 0; r < world; ++r) EXPECT_EQ(codes[r], 0) << "rank " << r;
}

INSTANTIATE_TEST_SUITE_P(TwoAndThreeRanks, Collectives, ::testing::Values(2, 3));

TEST(Communicator, WorldSizeOneIsALocalNoOp) {
  config::DistributedOptions options;
  auto comm = make_communicator(RankInfo{}, options, tts::config::Backend::kGloo);
  EXPECT_EQ(comm->size(), 1);
  EXPECT_EQ(comm->backend(), "local");
  EXPECT_EQ(comm->all_gather({1.0, 2.0}), (std::vector<double>{1.0, 2.0}));
}

TEST(Communicator, NcclOnACpuRankIsAUsageError) {
  // Without CUDA in the build, or with train.device cpu in a CUDA build, on any machine.
  config::DistributedOptions options;
  EXPECT_THROW(make_communicator(RankInfo{}, options, tts::config::Backend::kNccl,
                                 tts::config::Device::kCpu),
               UsageError);
}

}  // namespace
}  // namespace tts::dist
