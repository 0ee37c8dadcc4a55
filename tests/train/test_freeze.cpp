// train.freeze through the family seam: a frozen part gets no gradient, leaves its optimizer's
// parameter list (and so the reducer's and the clip's) and keeps its values through steps, while
// the rest trains; a part that names nothing, a prefix that ends inside a name and freezing all of
// an optimizer are refused.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "family_stub.h"
#include "tts/core/error.h"
#include "tts/dist/communicator.h"
#include "tts/train/family.h"
#include "tts/train/freeze.h"
#include "tts/train/step.h"

namespace {

using tts::train::FamilyBatch;

class Batch final : public FamilyBatch {
 public:
  Batch() : x(torch::randn({4, 3})), y(torch::randn({4, 2})), ids_{"a", "b", "c", "d"} {}
  const std::vector<std::string>& ids() const override { return ids_; }
  tts::train::BatchCounts counts() const override { return {4, 4, 4}; }
  torch::Tensor x, y;

 private:
  std::vector<std::string> ids_;
};

struct EncoderDecoder : torch::nn::Module {
  EncoderDecoder() {
    torch::manual_seed(3);
    encoder = register_module("encoder", torch::nn::Linear(3, 5));
    encoder_projection = register_module("encoder_projection", torch::nn::Linear(5, 5));
    decoder = register_module("decoder", torch::nn::Linear(5, 2));
  }
  torch::nn::Linear encoder{nullptr}, encoder_projection{nullptr}, decoder{nullptr};
};

class TwoPartFamily final : public tts::test::FamilyStub {
 public:
  TwoPartFamily() : model_(std::make_shared<EncoderDecoder>()) {
    tts::config::TrainOptions train;
    train.learning_rate = 0.01;
    slots_.push_back(tts::train::adam_slot("model", model_->parameters(), train));
  }
  torch::nn::Module& module() override { return *model_; }
  std::vector<tts::train::OptimizerSlot>& optimizers() override { return slots_; }
  void train_step(std::vector<std::unique_ptr<FamilyBatch>>& micro_batches,
                  tts::train::Updates& updates) override {
    const auto& batch = static_cast<Batch&>(*micro_batches.at(0));
    torch::Tensor out =
        model_->decoder(model_->encoder_projection(torch::tanh(model_->encoder(batch.x))));
    torch::Tensor loss = (out - batch.y).pow(2).mean();
    updates.backward(0, loss, true);
    updates.apply(0);
    updates.losses().add("loss", loss);
  }
  std::string describe() override { return "encoder-decoder"; }
  EncoderDecoder& model() { return *model_; }

 private:
  std::shared_ptr<EncoderDecoder> model_;
  std::vector<tts::train::OptimizerSlot> slots_;
};

std::map<std::string, torch::Tensor> snapshot(torch::nn::Module& module) {
  std::map<std::string, torch::Tensor> values;
  for (const auto& item : module.named_parameters()) values[item.key()] = item.value().clone();
  return values;
}

}  // namespace

TEST(Freeze, AFrozenPartKeepsItsValuesAndLeavesTheOptimizerWhileTheRestTrains) {
  TwoPartFamily family;
  const std::string summary = tts::train::freeze_parts(family, {"encoder"});
  EXPECT_NE(summary.find("2 tensors"), std::string::npos) << summary;
  // encoder.* alone: encoder_projection.* is another part.
  EXPECT_FALSE(family.model().encoder->weight.requires_grad());
  EXPECT_TRUE(family.model().encoder_projection->weight.requires_grad());
  const auto& slot = family.optimizers().at(0);
  EXPECT_EQ(slot.parameters.size(), 4u);
  EXPECT_EQ(slot.optimizer->param_groups().at(0).params().size(), 4u);

  auto comm = tts::dist::make_communicator(tts::dist::RankInfo{}, {}, tts::config::Backend::kGloo);
  tts::train::Step step(family, *comm, {}, 10);
  tts::checkpoint::TrainingState state;
  tts::train::IntervalTotals totals;
  const auto before = snapshot(family.module());
  torch::manual_seed(11);
  for (int i = 0; i < 3; ++i) {
    std::vector<std::unique_ptr<FamilyBatch>> batches;
    batches.push_back(std::make_unique<Batch>());
    step.run(batches, state, totals, false);
  }
  step.settle(totals);
  for (const auto& [name, value] : snapshot(family.module())) {
    const bool frozen = name.rfind("encoder.", 0) == 0;
    EXPECT_EQ(torch::equal(value, before.at(name)), frozen) << name;
    if (frozen) {
      EXPECT_FALSE(family.module().named_parameters()[name].grad().defined()) << name;
    }
  }
  EXPECT_EQ(totals.updates.at(0), 3);
}

TEST(Freeze, NothingToFreezeChangesNothing) {
  TwoPartFamily family;
  EXPECT_EQ(tts::train::freeze_parts(family, {}), "");
  EXPECT_EQ(family.optimizers().at(0).parameters.size(), 6u);
  EXPECT_TRUE(family.model().encoder->weight.requires_grad());
}

TEST(Freeze, APartThatNamesNoParameterIsRefusedListingTheModelsParts) {
  for (const std::string part : {"postnet", "enc", "encoder.weigh"}) {
    TwoPartFamily family;
    try {
      tts::train::freeze_parts(family, {part});
      ADD_FAILURE() << part << " was accepted";
    } catch (const tts::UsageError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("'" + part + "'"), std::string::npos) << what;
      EXPECT_NE(what.find("decoder, encoder, encoder_projection"), std::string::npos) << what;
    }
    // Nothing was frozen by the refused call.
    EXPECT_TRUE(family.model().encoder->weight.requires_grad());
  }
  TwoPartFamily family;  // a whole tensor name is a part too
  tts::train::freeze_parts(family, {"encoder.weight"});
  EXPECT_FALSE(family.model().encoder->weight.requires_grad());
  EXPECT_TRUE(family.model().encoder->bias.requires_grad());
}

TEST(Freeze, FreezingEveryParameterOfAnOptimizerIsRefused) {
  TwoPartFamily family;
  try {
    tts::train::freeze_parts(family, {"encoder", "encoder_projection", "decoder"});
    FAIL() << "accepted";
  } catch (const tts::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("optimizer 'model'"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(family.model().decoder->weight.requires_grad());
}
