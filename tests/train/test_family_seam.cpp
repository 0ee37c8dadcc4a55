// Tacotron-2 behind the model-family seam trains exactly as the plain algorithm: the same seed,
// model and Adam, the loader's batches in order, and for each: teacher-forced forward, the loss,
// backward, the global-norm clip, the learning rate of the step and Adam's update, with the
// utterances' own dropout masks and BatchNorm over the (here one rank's) batch. `train` (the
// scheduler, the Step, the reducer, the family) must end with the very same tensors, bit for bit,
// as this loop written out by hand.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "../cli/train_fixture.h"
#include "tts/checkpoint/checkpoint.h"
#include "tts/config/config.h"
#include "tts/data/feature_store.h"
#include "tts/data/loader.h"
#include "tts/dist/communicator.h"
#include "tts/models/keyed_dropout.h"
#include "tts/models/tacotron2/layers/network.h"
#include "tts/models/tacotron2/training/teacher_forced.h"
#include "tts/text/text_processor.h"
#include "tts/train/lr_schedule.h"
#include "tts/train/optimizer.h"
#include "tts/train/r_schedule.h"

namespace {

class FamilySeam : public tts::test::TrainFixture {};

constexpr int64_t kSteps = 5;

}  // namespace

TEST_F(FamilySeam, TacotronTrainsBitForBitAsThePlainLoop) {
  // Defaults of tiny.yaml (dropout on: the masks must agree too), a small batch so that the run
  // crosses an epoch boundary.
  const std::string settings = "--set train.batch_size=6 --set train.val_interval=1000";
  train("seam", "--max-steps " + std::to_string(kSteps) + " " + settings);

  tts::config::Config config =
      tts::config::load_config(tts::test::kTiny, {"train.batch_size=6", "train.val_interval=1000"});
  tts::data::FeatureStore store = tts::data::FeatureStore::open(feats_, config);
  tts::text::TextProcessor text(config.text);
  torch::manual_seed(static_cast<uint64_t>(config.train.seed));
  const tts::data::Phase phase = tts::train::phase_at(config, 0);
  tts::tacotron2::Tacotron2 model =
      tts::tacotron2::build_model(config, text.num_symbols(), phase.r);
  std::vector<torch::Tensor> parameters = model->parameters();
  auto adam = tts::train::make_adam(parameters, tts::train::adam_settings(config.train));
  tts::data::Loader loader(
      store, store.train(), config, phase,
      [&](const std::string& utterance) { return text.to_ids(utterance); }, 0, 1);
  auto one_rank = tts::dist::make_communicator(tts::dist::RankInfo{}, config.distributed,
                                               tts::config::Backend::kGloo);
  int64_t step = 0;
  for (int64_t epoch = 0; step < kSteps; ++epoch) {
    loader.start_epoch(epoch);
    while (step < kSteps) {
      std::optional<tts::data::Batch> batch = loader.next();
      if (!batch) break;
      model->train();
      adam->zero_grad();
      tts::tacotron2::TacotronOutput output;
      const tts::models::KeyedDropout dropout(static_cast<uint64_t>(config.train.seed), step + 1,
                                              batch->ids);
      tts::tacotron2::LossParts parts = tts::tacotron2::forward_loss(
          *model, *batch, config.train, &output,
          tts::tacotron2::training_context(*batch, dropout, config.train, *one_rank));
      parts.total.backward();
      torch::nn::utils::clip_grad_norm_(parameters, config.train.grad_clip_thresh);
      for (auto& group : adam->param_groups()) {
        group.options().set_lr(tts::train::learning_rate_at(config.train, step + 1));
      }
      adam->step();
      ++step;
    }
  }
  ASSERT_GT(loader.batches_per_epoch(), 1);
  ASSERT_LT(loader.batches_per_epoch(), kSteps) << "the run should cross an epoch boundary";

  tts::checkpoint::Checkpoint trained =
      tts::checkpoint::load_checkpoint(root_ + "/seam/checkpoints/latest");
  EXPECT_EQ(trained.state.step, kSteps);
  std::map<std::string, torch::Tensor> ours(trained.tensors.begin(), trained.tensors.end());
  size_t compared = 0;
  for (const auto& item : model->named_parameters()) {
    ASSERT_TRUE(ours.count(item.key())) << item.key();
    EXPECT_TRUE(torch::equal(ours[item.key()], item.value().detach()))
        << item.key() << " differs from the plain loop's";
    ++compared;
  }
  EXPECT_GT(compared, 30u);  // tiny.yaml's model has 40 parameter tensors
}
