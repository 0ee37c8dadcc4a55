// train::OpCounter: top-level operators, autograd nodes, host synchronizations and allocations of
// what runs while it lives.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "tts/core/error.h"
#include "tts/core/host_read.h"
#include "tts/train/op_counter.h"

namespace {

TEST(OpCounter, CountsTopLevelOperatorsNodesAndSynchronizations) {
  torch::Tensor x = torch::randn({4, 3}, torch::requires_grad());
  tts::train::OpCounts counts;
  {
    tts::train::OpCounter counter;
    torch::Tensor y = (x * 2).exp().sum();  // three operators
    y.backward();                           // their three nodes and the leaf's accumulation
    const double value = y.item<double>();  // a host synchronization
    EXPECT_TRUE(std::isfinite(value));
    torch::nonzero(x.detach() > 0);  // a data-dependent shape
    counts = counter.counts();
  }
  EXPECT_GE(counts.forward_ops, 4);
  EXPECT_GE(counts.backward_nodes, 3);
  EXPECT_EQ(counts.syncs["aten::_local_scalar_dense"], 1);
  EXPECT_EQ(counts.syncs["aten::nonzero"], 1);
  EXPECT_GE(counts.sync_total(), 2);
  EXPECT_GT(counts.allocations, 0);
  EXPECT_GT(counts.op_seconds, 0);

  // Nothing is counted once the counter is gone, and a new one starts from zero.
  (x * 3).sum().backward();
  tts::train::OpCounter again;
  EXPECT_EQ(again.counts().forward_ops, 0);
  EXPECT_THROW(tts::train::OpCounter second, tts::Error);
}

// A deliberate host read counts as a sync on every device, the CPU too (where .item() of a CPU
// tensor would, but a plain copy to the host would not).
TEST(OpCounter, CountsAHostReadAsASynchronization) {
  torch::Tensor x = torch::randn({5});
  tts::train::OpCounter counter;
  const torch::Tensor read = tts::host_read(x);
  EXPECT_TRUE(torch::equal(read, x));
  const tts::train::OpCounts counts = counter.counts();
  EXPECT_EQ(counts.syncs.at("tts::host_read"), 1);
  EXPECT_EQ(counts.sync_total(), 1);
}

}  // namespace
