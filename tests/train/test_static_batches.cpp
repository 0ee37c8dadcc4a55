// The static buffers a graphed step replays from (train/static_batches.h): one set per batch
// shape, made on the shape's first batch, reused after; a shape past the limit is refused. And
// what check_graphed_step (train/cuda_graph_step.h) refuses.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "tts/config/config.h"
#include "tts/core/error.h"
#include "tts/data/batch.h"
#include "tts/dist/communicator.h"
#include "tts/models/registry.h"
#include "tts/models/tacotron2/training/family.h"
#include "tts/train/cuda_graph_step.h"
#include "tts/train/static_batches.h"

namespace {

std::unique_ptr<tts::train::FamilyBatch> batch(int64_t frames, int64_t pad_frames, int r = 1) {
  std::vector<tts::data::Example> examples(2);
  for (int i = 0; i < 2; ++i) {
    examples[i].id = "u" + std::to_string(i);
    examples[i].text = {1, 2, 3};
    examples[i].mel = torch::full({frames - i, 4}, static_cast<float>(frames));
  }
  tts::data::Batch collated = tts::data::collate(std::move(examples), r, {4, pad_frames});
  return std::make_unique<tts::tacotron2::TacotronBatch>(std::move(collated));
}

// A batch of a family that cannot replay.
class PlainBatch final : public tts::train::FamilyBatch {
 public:
  const std::vector<std::string>& ids() const override { return ids_; }
  tts::train::BatchCounts counts() const override { return {}; }

 private:
  std::vector<std::string> ids_;
};

}  // namespace

TEST(StaticBatches, OneSetPerShapeKeptAcrossItsBatches) {
  tts::train::StaticBatches buffers(2);
  auto& first = buffers.load(*batch(10, 12));
  const auto* first_buffers = first.buffers.get();
  const void* mel =
      static_cast<tts::tacotron2::TacotronBatch&>(*first.buffers).batch.mel.data_ptr();
  auto& again = buffers.load(*batch(11, 12));  // another batch of the same bucket
  EXPECT_EQ(&again, &first);
  EXPECT_EQ(again.buffers.get(), first_buffers);
  EXPECT_EQ(again.loads, 2);
  const tts::data::Batch& held = static_cast<tts::tacotron2::TacotronBatch&>(*again.buffers).batch;
  EXPECT_EQ(held.mel.data_ptr(), mel);
  EXPECT_EQ(held.mel[0][0][0].item<float>(), 11.0f);  // the second batch's values
  EXPECT_EQ(held.mel_length_values, (std::vector<int64_t>{11, 10}));
  EXPECT_EQ(buffers.size(), 1);

  auto& other = buffers.load(*batch(10, 20));  // the next bucket
  EXPECT_NE(&other, &first);
  EXPECT_EQ(other.loads, 1);
  EXPECT_EQ(buffers.size(), 2);
  try {
    buffers.load(*batch(10, 30));
    FAIL() << "a third shape past the limit of 2 was taken";
  } catch (const tts::Error& e) {
    EXPECT_NE(std::string(e.what()).find("train.length_buckets"), std::string::npos) << e.what();
  }
}

// Batches of one shape collated for two r (a train.r_schedule switch between rows of one batch
// size) get a set each: a graph captured at one r must not replay the other's decoder steps.
TEST(StaticBatches, EachRGetsItsOwnSet) {
  tts::train::StaticBatches buffers(4);
  auto& one = buffers.load(*batch(10, 12, 1));
  auto& two = buffers.load(*batch(10, 12, 2));
  EXPECT_NE(&one, &two);
  EXPECT_EQ(buffers.size(), 2);
  EXPECT_NE(batch(10, 12, 2)->static_shape().find("r 2"), std::string::npos)
      << batch(10, 12, 2)->static_shape();
  EXPECT_EQ(static_cast<tts::tacotron2::TacotronBatch&>(*two.buffers).batch.r, 2);
}

TEST(StaticBatches, AFamilyWithoutStaticShapesIsRefused) {
  tts::train::StaticBatches buffers(4);
  try {
    buffers.load(PlainBatch());
    FAIL() << "a batch without a static shape was taken";
  } catch (const tts::Error& e) {
    EXPECT_NE(std::string(e.what()).find("train.cuda_graphs: false"), std::string::npos)
        << e.what();
  }
}

namespace {

std::unique_ptr<tts::train::Family> family_of(const std::string& config_file,
                                              tts::config::Config& config,
                                              tts::dist::Communicator& comm) {
  config = tts::config::load_config(std::string(TTS_SOURCE_DIR) + "/configs/" + config_file, {});
  // bench's subject: the family without a store.
  return tts::models::family(config.model.kind)
      .bench(tts::train::FamilyContext{config, tts::dist::Placement{}, comm, "", "", {}},
             tts::train::BenchShape{})
      .family;
}

std::string refusal(tts::train::Family& family, const tts::config::TrainOptions& train,
                    const torch::Device& device) {
  try {
    tts::train::check_graphed_step(family, train, device);
  } catch (const tts::UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// train.cuda_graphs is refused with its fix: without length buckets, with accumulation, for a
// family whose step a replay does not repeat (with its reason: the vocoders'), and off a CUDA
// device (or build). Tacotron-2's step is replayable: its refusals are the device's and the
// build's, under a train.r_schedule too (its static shapes carry r).
TEST(CheckGraphedStep, RefusesWhatAReplayCannotRepeatWithTheFix) {
  auto comm = tts::dist::make_communicator(tts::dist::RankInfo{}, {}, tts::config::Backend::kGloo);
  tts::config::Config tacotron_config, vocoder_config;
  auto tacotron = family_of("tiny.yaml", tacotron_config, *comm);
  auto vocoder = family_of("hifigan_small.yaml", vocoder_config, *comm);
  tts::config::TrainOptions train = tacotron_config.train;
  train.cuda_graphs = true;
  train.length_buckets = 0;
  EXPECT_NE(refusal(*tacotron, train, torch::kCUDA).find("set train.length_buckets"),
            std::string::npos);
  train.length_buckets = 4;
  train.accumulate = 2;
  EXPECT_NE(refusal(*tacotron, train, torch::kCUDA).find("set train.accumulate: 1"),
            std::string::npos);
  train.accumulate = 1;
  const std::string vocoder_refusal = refusal(*vocoder, train, torch::kCUDA);
  EXPECT_NE(vocoder_refusal.find("has not stated"), std::string::npos) << vocoder_refusal;
  EXPECT_NE(vocoder_refusal.find("train.cuda_graphs: false"), std::string::npos);
  // A family's reason comes before the device's: what would have to change in the model first.
  EXPECT_NE(refusal(*vocoder, train, torch::kCPU).find("has not stated"), std::string::npos);
  EXPECT_EQ(tacotron->replay_blocker(), "");
  const std::string on_cpu = refusal(*tacotron, train, torch::kCPU);
  EXPECT_NE(on_cpu.find("needs a CUDA device, but this run trains on cpu"), std::string::npos)
      << on_cpu;
#ifdef TTS_WITH_CUDA
  EXPECT_EQ(refusal(*tacotron, train, torch::kCUDA), "");
#else
  EXPECT_NE(refusal(*tacotron, train, torch::kCUDA).find("needs a build with CUDA"),
            std::string::npos);
#endif
}
