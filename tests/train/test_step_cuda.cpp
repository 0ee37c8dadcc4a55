// A training step on a GPU waits for nothing on the host (Note [No host reads in a step]): run
// under CUDA's sync debug mode set to error, any device->host copy, .item() or synchronization
// inside Step::run throws. The read point afterwards (Step::settle) is allowed to read. Built only
// with CUDA; skipped without a GPU.
#include <c10/cuda/CUDAFunctions.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "family_stub.h"
#include "tts/checkpoint/training_state.h"
#include "tts/core/error.h"
#include "tts/dist/communicator.h"
#include "tts/train/family.h"
#include "tts/train/step.h"

namespace {

using tts::train::FamilyBatch;
using tts::train::OptimizerSlot;

class DeviceBatch final : public FamilyBatch {
 public:
  DeviceBatch(torch::Tensor x, torch::Tensor y) : x(std::move(x)), y(std::move(y)) {}
  const std::vector<std::string>& ids() const override { return ids_; }
  tts::train::BatchCounts counts() const override { return {4, 4, 4}; }
  torch::Tensor x, y;

 private:
  std::vector<std::string> ids_{"a", "b", "c", "d"};
};

class CudaFamily final : public tts::test::FamilyStub {
 public:
  CudaFamily() : net_(std::make_shared<torch::nn::LinearImpl>(8, 3)) {
    net_->to(torch::kCUDA);
    OptimizerSlot s;
    s.name = "net";
    s.parameters = net_->parameters();
    s.optimizer = std::make_unique<torch::optim::AdamW>(
        s.parameters, torch::optim::AdamWOptions(1e-3).weight_decay(0.01));
    s.learning_rate = [](int64_t step, int64_t) { return 1e-3 / static_cast<double>(step); };
    s.grad_clip = 1.0;
    slots_.push_back(std::move(s));
  }
  torch::nn::Module& module() override { return *net_; }
  std::vector<OptimizerSlot>& optimizers() override { return slots_; }
  void train_step(std::vector<std::unique_ptr<FamilyBatch>>& micro_batches,
                  tts::train::Updates& updates) override {
    const auto& batch = static_cast<DeviceBatch&>(*micro_batches.at(0));
    torch::Tensor loss = (net_->forward(batch.x) - batch.y).pow(2).mean();
    updates.backward(0, loss, true);
    updates.apply(0);
    updates.losses().add("loss", loss);
  }
  std::string describe() override { return "linear on CUDA"; }

 private:
  std::shared_ptr<torch::nn::LinearImpl> net_;
  std::vector<OptimizerSlot> slots_;
};

// Restores the sync debug mode however the test ends.
struct SyncDebugError {
  SyncDebugError() {
    c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_ERROR);
  }
  ~SyncDebugError() {
    c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_DISABLED);
  }
};

TEST(StepCuda, AStepSynchronizesNothing) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no GPU";
  auto comm = tts::dist::make_communicator(tts::dist::RankInfo{}, {}, tts::config::Backend::kGloo,
                                           tts::config::Device::kCuda);
  CudaFamily family;
  tts::train::Step step(family, *comm, {}, 3);
  tts::checkpoint::TrainingState state;
  tts::train::IntervalTotals totals;
  auto batches = [] {
    std::vector<std::unique_ptr<FamilyBatch>> b;
    b.push_back(std::make_unique<DeviceBatch>(torch::randn({4, 8}, torch::kCUDA),
                                              torch::randn({4, 3}, torch::kCUDA)));
    return b;
  };
  // The first step builds the optimizer state and the step counts (allocations only), outside
  // the checked region as well, so that only a steady step is checked.
  auto first = batches();
  step.run(first, state, totals, false);
  auto second = batches();
  torch::cuda::synchronize();
  {
    SyncDebugError error_on_sync;
    EXPECT_NO_THROW(step.run(second, state, totals, false));
  }
  step.settle(totals);
  EXPECT_EQ(state.step, 2);
  EXPECT_EQ(totals.updates.at(0), 2);
  EXPECT_GT(totals.grad_norm_sums.at(0), 0);
}

}  // namespace
