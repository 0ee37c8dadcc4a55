// The trainer core's Step through the model-family seam with a family shaped like a GAN vocoder:
// two optimizers (discriminator, then generator), two backward passes and two reductions per
// step, each with its own learning-rate rule. On one process: learning rates in the training
// state, a non-finite update skipped for its optimizer alone, and a checkpoint of both optimizers
// that resumes bit for bit. On 2 and 3 Gloo ranks: W ranks x B train as 1 rank x W*B.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "../dist/fork_ranks.h"
#include "../support/scratch.h"
#include "family_stub.h"
#include "tts/checkpoint/checkpoint.h"
#include "tts/core/error.h"
#include "tts/dist/communicator.h"
#include "tts/dist/replicas.h"
#include "tts/train/family.h"
#include "tts/train/step.h"

namespace {

using tts::checkpoint::TrainingState;
using tts::train::FamilyBatch;
using tts::train::OptimizerSlot;

constexpr int kPerRank = 4;  // utterances per rank and step
constexpr int64_t kFeatures = 6;

// A "real" sample and the noise its generator input is: the same on every process for an index.
struct Sample {
  torch::Tensor real, noise;
};
Sample sample(int64_t index) {
  torch::manual_seed(10000 + index);
  return {torch::randn({kFeatures}), torch::randn({kFeatures})};
}

class ToyBatch final : public FamilyBatch {
 public:
  explicit ToyBatch(std::vector<int64_t> indices) : indices(std::move(indices)) {
    std::vector<torch::Tensor> reals, noises;
    for (int64_t i : this->indices) {
      Sample s = sample(i);
      reals.push_back(s.real);
      noises.push_back(s.noise);
      ids_.push_back("sample_" + std::to_string(i));
    }
    real = torch::stack(reals);
    noise = torch::stack(noises);
  }
  const std::vector<std::string>& ids() const override { return ids_; }
  tts::train::BatchCounts counts() const override {
    const auto n = static_cast<int64_t>(indices.size());
    return {n, n, n};
  }
  std::vector<int64_t> indices;
  torch::Tensor real, noise;

 private:
  std::vector<std::string> ids_;
};

struct ToyGan : torch::nn::Module {
  ToyGan() {
    torch::manual_seed(7);
    generator = register_module("generator", torch::nn::Linear(kFeatures, kFeatures));
    discriminator = register_module("discriminator", torch::nn::Linear(kFeatures, 1));
  }
  torch::nn::Linear generator{nullptr}, discriminator{nullptr};
};

// Least-squares GAN losses, as HiFi-GAN's: the discriminator first (on a detached fake), then
// the generator through the updated discriminator.
class ToyGanFamily final : public tts::test::FamilyStub {
 public:
  explicit ToyGanFamily(double generator_lr = 0.05, double generator_eps = 1e-8)
      : gan_(std::make_shared<ToyGan>()) {
    auto slot = [&](const char* name, std::vector<torch::Tensor> params, double lr, double eps) {
      OptimizerSlot s;
      s.name = name;
      s.parameters = params;
      s.optimizer =
          std::make_unique<torch::optim::Adam>(params, torch::optim::AdamOptions(lr).eps(eps));
      s.learning_rate = [lr](int64_t step, int64_t) { return lr / static_cast<double>(step); };
      s.grad_clip = 10.0;
      return s;
    };
    slots_.push_back(slot("discriminator", gan_->discriminator->parameters(), 0.1, 1e-8));
    slots_.push_back(slot("generator", gan_->generator->parameters(), generator_lr, generator_eps));
  }
  torch::nn::Module& module() override { return *gan_; }
  std::vector<OptimizerSlot>& optimizers() override { return slots_; }
  void train_step(std::vector<std::unique_ptr<FamilyBatch>>& micro_batches,
                  tts::train::Updates& updates) override {
    const auto& batch = static_cast<ToyBatch&>(*micro_batches.at(0));
    torch::Tensor fake = gan_->generator->forward(batch.noise);
    torch::Tensor d_loss = (gan_->discriminator->forward(batch.real) - 1).pow(2).mean() +
                           gan_->discriminator->forward(fake.detach()).pow(2).mean();
    updates.backward(0, d_loss, true);
    updates.apply(0);
    torch::Tensor g_loss = (gan_->discriminator->forward(fake) - 1).pow(2).mean() * g_scale;
    updates.backward(1, g_loss, true);
    updates.apply(1);
    updates.losses().add("loss", d_loss + g_loss);
    device_steps.push_back(updates.device_step().clone());
    device_step_storage = updates.device_step().data_ptr();
  }
  std::string describe() override { return "toy GAN"; }

  double g_scale = 1.0;  // NaN: the generator's update is non-finite
  // Updates::device_step of each step taken (copies), and where it lives.
  std::vector<torch::Tensor> device_steps;
  const void* device_step_storage = nullptr;

 private:
  std::shared_ptr<ToyGan> gan_;
  std::vector<OptimizerSlot> slots_;
};

// The batch rank `rank` of `world` takes at step `step` of a global batch of world x kPerRank.
std::vector<std::unique_ptr<FamilyBatch>> batch_of(int64_t step, int rank, int world) {
  std::vector<int64_t> indices;
  const int64_t first = step * world * kPerRank + rank * kPerRank;
  for (int64_t i = 0; i < kPerRank; ++i) indices.push_back(first + i);
  std::vector<std::unique_ptr<FamilyBatch>> batches;
  batches.push_back(std::make_unique<ToyBatch>(indices));
  return batches;
}
// The whole global batch of `world` ranks at `step`, for one process.
std::vector<std::unique_ptr<FamilyBatch>> global_batch_of(int64_t step, int world) {
  std::vector<int64_t> indices;
  for (int64_t i = 0; i < world * kPerRank; ++i) indices.push_back(step * world * kPerRank + i);
  std::vector<std::unique_ptr<FamilyBatch>> batches;
  batches.push_back(std::make_unique<ToyBatch>(indices));
  return batches;
}

std::unique_ptr<tts::dist::Communicator> local() {
  return tts::dist::make_communicator(tts::dist::RankInfo{}, {}, tts::config::Backend::kGloo);
}

void run_steps(tts::train::Step& step, TrainingState& state, tts::train::IntervalTotals& totals,
               int64_t from, int64_t to) {
  for (int64_t s = from; s < to; ++s) {
    auto batches = batch_of(s, 0, 1);
    step.run(batches, state, totals, false);
  }
  step.settle(totals);  // a read point, as the trainer's log interval
}

}  // namespace

TEST(Step, EachOptimizerUpdatesAtItsOwnRateAndTheStateHoldsTheRates) {
  auto comm = local();
  ToyGanFamily family;
  tts::train::Step step(family, *comm, {}, 3);
  TrainingState state;
  tts::train::IntervalTotals totals;
  torch::Tensor d_before = family.optimizers()[0].parameters[0].detach().clone();
  torch::Tensor g_before = family.optimizers()[1].parameters[0].detach().clone();
  run_steps(step, state, totals, 0, 2);
  EXPECT_EQ(state.step, 2);
  ASSERT_EQ(state.learning_rates.size(), 2u);
  EXPECT_DOUBLE_EQ(state.learning_rates[0], 0.1 / 2);  // the second step's, per the rule
  EXPECT_DOUBLE_EQ(state.learning_rates[1], 0.05 / 2);
  EXPECT_FALSE(torch::equal(d_before, family.optimizers()[0].parameters[0]));
  EXPECT_FALSE(torch::equal(g_before, family.optimizers()[1].parameters[0]));
  ASSERT_EQ(totals.updates, (std::vector<int64_t>{2, 2}));
  EXPECT_GT(totals.grad_norm_sums[0], 0);
  EXPECT_GT(totals.grad_norm_sums[1], 0);
  EXPECT_EQ(totals.times.steps, 2);
  EXPECT_EQ(totals.times.utterances, 2 * kPerRank);
  EXPECT_EQ(totals.losses.count, 2);
  EXPECT_TRUE(std::isfinite(totals.losses.mean("loss")));
}

// Step::begin writes the step's learning rates and number into device buffers in place; what
// comes after it (take, what a captured graph records) reads the rates there, not the schedule,
// and a step run as begin, take and finish is the step run() takes.
TEST(Step, TheLearningRatesAndTheStepNumberComeFromDeviceBuffersThatBeginWrites) {
  auto comm = local();
  ToyGanFamily eager, split;
  tts::train::Step eager_step(eager, *comm, {}, 3);
  tts::train::Step split_step(split, *comm, {}, 3);
  TrainingState eager_state, split_state;
  tts::train::IntervalTotals eager_totals, split_totals;
  for (int64_t s = 0; s < 3; ++s) {
    auto eager_batches = batch_of(s, 0, 1);
    eager_step.run(eager_batches, eager_state, eager_totals, false);
    auto split_batches = batch_of(s, 0, 1);
    split_step.begin(split_state, false);
    EXPECT_EQ(split_state.step, s) << "begin does not advance the step";
    split_step.take(split_batches, split_state, split_totals);
    EXPECT_EQ(split_state.step, s) << "take does not advance the step";
    tts::train::Step::finish(split_batches, 0.0, split_state, split_totals);
    EXPECT_EQ(split_state.step, s + 1);
  }
  EXPECT_EQ(split_state.learning_rates, eager_state.learning_rates);
  EXPECT_EQ(split_totals.losses.count, 3);
  EXPECT_EQ(split_totals.times.steps, 3);
  EXPECT_EQ(split_totals.times.utterances, 3 * kPerRank);
  EXPECT_EQ(split_totals.losses.mean("loss"), eager_totals.losses.mean("loss"));
  auto expected = eager.module().named_parameters();
  for (const auto& item : split.module().named_parameters()) {
    EXPECT_TRUE(torch::equal(item.value(), expected[item.key()])) << item.key();
  }
  // The step number each step saw on the device: 1, 2, 3, in one tensor (int64, 0-dim).
  ASSERT_EQ(split.device_steps.size(), 3u);
  for (int64_t s = 0; s < 3; ++s) {
    EXPECT_EQ(split.device_steps[s].dim(), 0);
    EXPECT_EQ(split.device_steps[s].scalar_type(), torch::kInt64);
    EXPECT_EQ(split.device_steps[s].item<int64_t>(), s + 1);
  }
  const void* storage = split.device_step_storage;
  // A schedule changed after begin does not reach the update: take reads begin's buffers.
  ToyGanFamily changed;
  tts::train::Step changed_step(changed, *comm, {}, 3);
  TrainingState changed_state;
  tts::train::IntervalTotals changed_totals;
  ToyGanFamily reference;
  tts::train::Step reference_step(reference, *comm, {}, 3);
  TrainingState reference_state;
  tts::train::IntervalTotals reference_totals;
  auto batches = batch_of(0, 0, 1);
  changed_step.begin(changed_state, false);
  for (OptimizerSlot& slot : changed.optimizers()) {
    slot.learning_rate = [](int64_t, int64_t) { return 1000.0; };
  }
  changed_step.take(batches, changed_state, changed_totals);
  auto reference_batches = batch_of(0, 0, 1);
  reference_step.run(reference_batches, reference_state, reference_totals, false);
  auto updated = reference.module().named_parameters();
  for (const auto& item : changed.module().named_parameters()) {
    EXPECT_TRUE(torch::equal(item.value(), updated[item.key()])) << item.key();
  }
  // The buffer keeps its storage from step to step (a replay reads the same memory).
  auto more = batch_of(3, 0, 1);
  split_step.run(more, split_state, split_totals, false);
  EXPECT_EQ(split.device_step_storage, storage);
  EXPECT_EQ(split.device_steps.back().item<int64_t>(), 4);
  // So do the device grad-norm sums and update counts across an interval's reset.
  split_step.settle(split_totals);
  const void* norms = split_totals.device_grad_norm_sums.at(0).data_ptr();
  const void* updates = split_totals.device_updates.at(1).data_ptr();
  split_totals.reset();
  EXPECT_EQ(split_totals.times.steps, 0);
  EXPECT_EQ(split_totals.updates, (std::vector<int64_t>{0, 0}));
  auto after = batch_of(4, 0, 1);
  split_step.run(after, split_state, split_totals, false);
  split_step.settle(split_totals);
  EXPECT_EQ(split_totals.device_grad_norm_sums.at(0).data_ptr(), norms);
  EXPECT_EQ(split_totals.device_updates.at(1).data_ptr(), updates);
  EXPECT_EQ(split_totals.updates, (std::vector<int64_t>{1, 1}));
}

// The loss sums are added to in place and zeroed in place at an interval's reset: the same
// storage from interval to interval (what a replayed graph adds into), and the same means as a
// sum made anew each step (the first value, then + each next, divided by the count).
TEST(LossSums, AddInPlaceAndResetKeepTheStorageAndTheMeans) {
  tts::train::IntervalTotals totals;
  const std::vector<std::vector<float>> intervals = {{0.3f, 1.7f, 2.9f}, {0.11f, 5.5f}};
  const void* storage = nullptr;
  for (const std::vector<float>& values : intervals) {
    torch::Tensor expected;
    for (float v : values) {
      const torch::Tensor value = torch::scalar_tensor(v, torch::kFloat32);
      totals.losses.add("loss", value);
      totals.losses.add("off", torch::Tensor());  // an undefined part: not summed
      totals.losses.next();
      expected = expected.defined() ? expected + value : value.clone();
    }
    ASSERT_EQ(totals.losses.sums.size(), 1u);
    if (storage == nullptr) storage = totals.losses.sums[0].second.data_ptr();
    EXPECT_EQ(totals.losses.sums[0].second.data_ptr(), storage);
    EXPECT_EQ(totals.losses.mean("loss"),
              expected.to(torch::kFloat64).item<double>() / static_cast<double>(values.size()));
    EXPECT_TRUE(std::isnan(totals.losses.mean("off")));
    totals.reset();
    EXPECT_EQ(totals.losses.count, 0);
    EXPECT_TRUE(std::isnan(totals.losses.mean("loss")));
    EXPECT_EQ(totals.losses.sums[0].second.item<float>(), 0.0f);
  }
}

TEST(Step, ANonFiniteUpdateIsSkippedForItsOptimizerAloneAndCounted) {
  auto comm = local();
  ToyGanFamily family;
  tts::train::Step step(family, *comm, {}, 2);
  TrainingState state;
  tts::train::IntervalTotals totals;
  family.g_scale = NAN;
  torch::Tensor d_before = family.optimizers()[0].parameters[0].detach().clone();
  torch::Tensor g_before = family.optimizers()[1].parameters[0].detach().clone();
  run_steps(step, state, totals, 0, 1);
  EXPECT_FALSE(torch::equal(d_before, family.optimizers()[0].parameters[0]))
      << "the discriminator's finite update is taken";
  EXPECT_TRUE(torch::equal(g_before, family.optimizers()[1].parameters[0]))
      << "the generator's non-finite update is skipped";
  EXPECT_EQ(totals.updates, (std::vector<int64_t>{1, 0}));
  // train.max_bad_steps = 2 consecutive skipped steps end the run, naming the utterances.
  try {
    run_steps(step, state, totals, 1, 2);
    FAIL() << "two bad steps in a row went on";
  } catch (const tts::Error& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("train.max_bad_steps"), std::string::npos) << message;
    EXPECT_NE(message.find("sample_"), std::string::npos) << message;
  }
}

namespace {

// The read point after three skipped updates in a row (train.max_bad_steps 3) ends the run,
// naming the count, the last step and its first utterance.
void expect_three_bad_steps_end_the_run(tts::train::Step& step, tts::train::IntervalTotals& totals,
                                        int64_t last_step, const std::string& utterance) {
  try {
    step.settle(totals);
    FAIL() << "three bad steps in a row went on";
  } catch (const tts::Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("3 steps in a row"), std::string::npos) << message;
    EXPECT_NE(message.find(fmt::format("the last step {}", last_step)), std::string::npos)
        << message;
    EXPECT_NE(message.find(utterance), std::string::npos) << message;
  }
}

}  // namespace

// A step decides on the device (Note [No host reads in a step]): skipped updates are counted,
// warned about and held against train.max_bad_steps at the next read point, Step::settle, which
// names the step that reached the limit.
TEST(Step, SkippedUpdatesAreReportedAtTheReadPoint) {
  auto comm = local();
  ToyGanFamily family;
  tts::train::Step step(family, *comm, {}, 3);
  TrainingState state;
  tts::train::IntervalTotals totals;
  family.g_scale = NAN;
  for (int64_t s = 0; s < 2; ++s) {
    auto batches = batch_of(s, 0, 1);
    EXPECT_NO_THROW(step.run(batches, state, totals, false));
  }
  EXPECT_EQ(totals.updates, (std::vector<int64_t>{0, 0})) << "nothing read before the read point";
  EXPECT_NO_THROW(step.settle(totals));
  EXPECT_EQ(totals.updates, (std::vector<int64_t>{2, 0}));
  EXPECT_GT(totals.grad_norm_sums[0], 0);
  EXPECT_EQ(totals.grad_norm_sums[1], 0);
  // A good step in between resets the count; then three bad ones in a row end the run at the
  // third, named, at the read point after it.
  family.g_scale = 1.0;
  auto good = batch_of(2, 0, 1);
  step.run(good, state, totals, false);
  family.g_scale = NAN;
  for (int64_t s = 3; s < 7; ++s) {
    auto batches = batch_of(s, 0, 1);
    EXPECT_NO_THROW(step.run(batches, state, totals, false));
  }
  expect_three_bad_steps_end_the_run(step, totals, 6, "sample_20 ");  // step 6's first
}

// A step run as a replayed CUDA graph (Note [Replaying a training step]) leaves its record for
// settle() through Step::captured and Step::replayed: here on the CPU, take() stands for the
// capture and its replay at once (its outputs are what a replay writes), and the steps are
// reported as eager ones are: the updates counted, the skipped ones warned about and held
// against train.max_bad_steps, naming the step and its utterances.
TEST(Step, AReplayedStepIsReportedAtTheReadPointAsAnEagerOne) {
  auto comm = local();
  ToyGanFamily family;
  tts::train::Step step(family, *comm, {}, 3);
  TrainingState state;
  tts::train::IntervalTotals totals;
  auto replay = [&](int64_t s) {
    auto batches = batch_of(s, 0, 1);
    step.begin(state, false);
    step.take(batches, state, totals);
    const tts::train::Step::Captured record = step.captured();
    ASSERT_EQ(record.kept.size(), 2u);
    step.replayed(record, batches, state);
    tts::train::Step::finish(batches, 0.0, state, totals);
  };
  replay(0);
  family.g_scale = NAN;
  replay(1);
  step.settle(totals);
  EXPECT_EQ(state.step, 2);
  EXPECT_EQ(totals.updates, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(totals.losses.count, 2);
  for (int64_t s = 2; s < 5; ++s) replay(s);
  expect_three_bad_steps_end_the_run(step, totals, 4, "sample_12 ");  // step 4's first
}

TEST(Step, ACheckpointOfBothOptimizersResumesBitForBit) {
  const std::string dir = tts::test::fresh_dir("step_two_optimizers");
  auto comm = local();
  ToyGanFamily uninterrupted;
  {
    tts::train::Step step(uninterrupted, *comm, {}, 3);
    TrainingState state;
    tts::train::IntervalTotals totals;
    run_steps(step, state, totals, 0, 4);
  }
  std::string saved;
  {
    ToyGanFamily first;
    tts::train::Step step(first, *comm, {}, 3);
    TrainingState state;
    tts::train::IntervalTotals totals;
    run_steps(step, state, totals, 0, 2);
    std::vector<torch::optim::Optimizer*> optimizers;
    for (auto& slot : first.optimizers()) optimizers.push_back(slot.optimizer.get());
    saved = tts::checkpoint::save_checkpoint(
        dir, tts::checkpoint::capture(first.module(), optimizers, state, ""), 2);
  }
  tts::checkpoint::Checkpoint loaded = tts::checkpoint::load_checkpoint(saved);
  ASSERT_EQ(loaded.optimizers.size(), 2u);
  ToyGanFamily resumed;
  tts::checkpoint::restore_model(loaded, resumed.module(), saved);
  for (size_t i = 0; i < 2; ++i) {
    tts::checkpoint::restore_optimizer(loaded, i, *resumed.optimizers()[i].optimizer);
  }
  tts::train::Step step(resumed, *comm, {}, 3);
  TrainingState state = loaded.state;
  tts::train::IntervalTotals totals;
  run_steps(step, state, totals, 2, 4);
  auto expected = uninterrupted.module().named_parameters();
  for (const auto& item : resumed.module().named_parameters()) {
    EXPECT_TRUE(torch::equal(item.value(), expected[item.key()])) << item.key();
  }
  // A checkpoint of two optimizers is refused by a family of one, by name of the problem.
  tts::checkpoint::Checkpoint one = loaded;
  one.optimizers.resize(1);
  ToyGanFamily two;
  EXPECT_THROW(tts::checkpoint::restore_optimizer(one, 1, *two.optimizers()[1].optimizer),
               tts::Error);
}

class StepRanks : public ::testing::TestWithParam<int> {};

TEST_P(StepRanks, WRanksOfBTrainAsOneRankOfWB) {
  const int world = GetParam();
  constexpr int kSteps = 3;
  auto codes = tts::dist::testing::run_ranks(world, [world](int rank) {
    torch::set_num_threads(1);
    tts::config::DistributedOptions options;
    options.timeout_s = 30;
    auto comm = tts::dist::make_communicator(tts::dist::RankInfo::from_env(), options,
                                             tts::config::Backend::kGloo);
    ToyGanFamily family;
    tts::train::Step step(family, *comm, options, 3);
    TrainingState state;
    tts::train::IntervalTotals totals;
    for (int64_t s = 0; s < kSteps; ++s) {
      auto batches = batch_of(s, rank, world);
      step.run(batches, state, totals, false);
    }
    tts::dist::check_replicas(family.module(), *comm, kSteps);
    if (rank != 0) return;
    auto one = local();
    ToyGanFamily reference;
    tts::train::Step reference_step(reference, *one, {}, 3);
    TrainingState reference_state;
    tts::train::IntervalTotals reference_totals;
    for (int64_t s = 0; s < kSteps; ++s) {
      auto batches = global_batch_of(s, world);
      reference_step.run(batches, reference_state, reference_totals, false);
    }
    auto expected = reference.module().named_parameters();
    for (const auto& item : family.module().named_parameters()) {
      const torch::Tensor& want = expected[item.key()];
      const double difference =
          ((item.value() - want).abs().max() / want.abs().max().clamp_min(1e-12)).item<double>();
      EXPECT_LE(difference, 1e-5) << item.key();
    }
  });
  for (int r = 0; r < world; ++r) EXPECT_EQ(codes[r], 0) << "rank " << r;
}

INSTANTIATE_TEST_SUITE_P(Worlds, StepRanks, ::testing::Values(2, 3));

TEST(Step, AnUpdateThatMakesAWeightNonFiniteIsUndoneCountedAndNeverSaved) {
  const std::string dir = tts::test::fresh_dir("step_non_finite_update");
  auto comm = local();
  // A finite gradient, and yet Adam's update is 0 / 0: a zero gradient with eps 0.
  ToyGanFamily family(/*generator_lr=*/0.05, /*generator_eps=*/0.0);
  family.g_scale = 0.0;
  tts::train::Step step(family, *comm, {}, 3);
  TrainingState state;
  tts::train::IntervalTotals totals;
  torch::Tensor d_before = family.optimizers()[0].parameters[0].detach().clone();
  torch::Tensor g_before = family.optimizers()[1].parameters[0].detach().clone();
  run_steps(step, state, totals, 0, 1);
  EXPECT_FALSE(torch::equal(d_before, family.optimizers()[0].parameters[0]));
  EXPECT_TRUE(torch::equal(g_before, family.optimizers()[1].parameters[0]))
      << "the update that made the weights NaN is undone";
  EXPECT_EQ(totals.updates, (std::vector<int64_t>{1, 0}));
  for (const auto& slot : family.optimizers()) {
    for (const torch::Tensor& p : slot.parameters) {
      EXPECT_TRUE(torch::isfinite(p).all().item<bool>());
    }
  }
  // What is saved is finite, and resumes.
  std::vector<torch::optim::Optimizer*> optimizers;
  for (auto& slot : family.optimizers()) optimizers.push_back(slot.optimizer.get());
  const std::string saved = tts::checkpoint::save_checkpoint(
      dir, tts::checkpoint::capture(family.module(), optimizers, state, ""), 1);
  tts::checkpoint::Checkpoint loaded = tts::checkpoint::load_checkpoint(saved);
  ToyGanFamily resumed;
  tts::checkpoint::restore_model(loaded, resumed.module(), saved);
  for (size_t i = 0; i < 2; ++i) {
    tts::checkpoint::restore_optimizer(loaded, i, *resumed.optimizers()[i].optimizer);
  }
  // Steps in a row whose updates are non-finite end the run like non-finite gradients
  // (train.max_bad_steps).
  try {
    run_steps(step, state, totals, 1, 4);
    FAIL() << "three bad steps in a row went on";
  } catch (const tts::Error& e) {
    EXPECT_NE(std::string(e.what()).find("train.max_bad_steps"), std::string::npos) << e.what();
  }
}

TEST(Step, ACheckpointWithANonFiniteWeightIsNeverWritten) {
  const std::string dir = tts::test::fresh_dir("step_non_finite_save");
  auto comm = local();
  ToyGanFamily family;
  {
    torch::NoGradGuard no_grad;
    family.optimizers()[1].parameters[0].view({-1})[3] = NAN;
  }
  std::vector<torch::optim::Optimizer*> optimizers;
  for (auto& slot : family.optimizers()) optimizers.push_back(slot.optimizer.get());
  try {
    tts::checkpoint::save_checkpoint(
        dir, tts::checkpoint::capture(family.module(), optimizers, TrainingState{}, ""), 1);
    FAIL() << "a NaN weight was saved";
  } catch (const tts::Error& e) {
    EXPECT_NE(std::string(e.what()).find("generator.weight"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(tts::checkpoint::checkpoint_files(dir).empty());
}
