// Gradual training: the schedule's phases, its config rows, and a decoder built so that every r
// of a schedule works from the same parameters (and, without a schedule, NVIDIA's layout).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <map>

#include "tts/config/config.h"
#include "tts/core/error.h"
#include "tts/models/tacotron2/layers/network.h"
#include "tts/train/r_schedule.h"

namespace {

tts::config::Config small_config() {
  tts::config::Config config;
  config.model.symbols_embedding_dim = 16;
  config.model.encoder_embedding_dim = 16;
  config.model.encoder_n_convolutions = 1;
  config.model.attention_rnn_dim = 24;
  config.model.decoder_rnn_dim = 24;
  config.model.prenet_dim = 8;
  config.model.attention_dim = 8;
  config.model.attention_location_n_filters = 4;
  config.model.postnet_embedding_dim = 8;
  config.model.postnet_n_convolutions = 2;
  config.model.p_prenet_dropout = 0;  // always on otherwise, even in eval()
  return config;
}

std::map<std::string, std::vector<int64_t>> shapes(tts::tacotron2::Tacotron2Impl& model) {
  std::map<std::string, std::vector<int64_t>> out;
  for (const auto& item : model.named_parameters()) out[item.key()] = item.value().sizes().vec();
  return out;
}

constexpr int64_t kMels = 10;

}  // namespace

TEST(RSchedule, PhasesFollowTheRowsAndWithoutAScheduleTheModelAndBatchSettings) {
  tts::config::Config config = small_config();
  config.model.n_frames_per_step = 2;
  config.train.batch_size = 8;
  EXPECT_EQ(tts::train::phase_at(config, 0).r, 2);
  EXPECT_EQ(tts::train::phase_at(config, 1000).batch_size, 8);
  config.train.r_schedule = {{0, 6, 64}, {10000, 4, 32}, {50000, 3, 32}};
  EXPECT_EQ(tts::train::phase_at(config, 0).r, 6);
  EXPECT_EQ(tts::train::phase_at(config, 9999).r, 6);
  EXPECT_EQ(tts::train::phase_at(config, 10000).r, 4);
  EXPECT_EQ(tts::train::phase_at(config, 10000).batch_size, 32);
  EXPECT_EQ(tts::train::phase_at(config, 70000).r, 3);
  EXPECT_EQ(config.train.max_scheduled_r(), 6);
}

TEST(RSchedule, TheConfigReadsRowsAndRefusesBadOnes) {
  tts::config::Config config =
      tts::config::parse_config("train:\n  r_schedule: [[0, 3, 4], [20, 2, 4], [40, 1, 2]]\n", "t");
  ASSERT_EQ(config.train.r_schedule.size(), 3u);
  EXPECT_EQ(config.train.r_schedule[2], (tts::config::RScheduleRow{40, 1, 2}));
  // The dumped config reads back to the same schedule (checkpoints carry it).
  tts::config::Config again = tts::config::parse_config(tts::config::dump_config(config), "dump");
  EXPECT_EQ(again.train.r_schedule, config.train.r_schedule);

  for (const char* bad :
       {"[[5, 3, 4]]", "[[0, 3]]", "[[0, 3, 4], [0, 2, 4]]", "[[0, 0, 4]]", "[0, 3, 4]"}) {
    EXPECT_THROW(tts::config::parse_config(std::string("train:\n  r_schedule: ") + bad + "\n", "t"),
                 tts::UsageError)
        << bad;
  }
  // A row of another length is refused where it is written, with the row's form.
  try {
    tts::config::parse_config("train:\n  r_schedule: [[0, 3, 4], [20, 2]]\n", "t.yaml");
    FAIL() << "a two-number row was read";
  } catch (const tts::UsageError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("t.yaml"), std::string::npos) << message;
    EXPECT_NE(message.find("[from_step, r, batch_size]"), std::string::npos) << message;
  }
}

TEST(RSchedule, WithoutAScheduleTheParametersKeepNvidiasShapes) {
  tts::config::Config config = small_config();
  config.model.n_frames_per_step = 3;
  tts::tacotron2::Tacotron2 model(config.model, 20, kMels, 0);
  auto s = shapes(*model);
  EXPECT_EQ(s["decoder.prenet.layer0.weight"], (std::vector<int64_t>{8, kMels * 3}));
  EXPECT_EQ(s["decoder.linear_projection.weight"], (std::vector<int64_t>{kMels * 3, 24 + 16}));
  EXPECT_EQ(s["decoder.gate_layer.weight"], (std::vector<int64_t>{3, 24 + 16}));
  EXPECT_NO_THROW(model->set_reduction_factor(3));
  EXPECT_THROW(model->set_reduction_factor(2), tts::Error);
}

TEST(RSchedule, EveryROfTheScheduleRunsFromTheSameParameters) {
  tts::config::Config config = small_config();
  config.model.n_frames_per_step = 3;
  torch::manual_seed(1);
  tts::tacotron2::Tacotron2 model(config.model, 20, kMels, 0, /*max_r=*/3);
  auto s = shapes(*model);
  EXPECT_EQ(s["decoder.prenet.layer0.weight"], (std::vector<int64_t>{8, kMels}));  // last frame
  EXPECT_EQ(s["decoder.linear_projection.weight"], (std::vector<int64_t>{kMels * 3, 24 + 16}));
  EXPECT_EQ(s["decoder.gate_layer.weight"], (std::vector<int64_t>{3, 24 + 16}));
  const size_t count = s.size();

  auto text = torch::randint(1, 20, {2, 7}, torch::kLong);
  auto text_lengths = torch::tensor(std::vector<int64_t>{7, 5});
  auto mel = torch::randn({2, 12, kMels});
  auto mel_lengths = torch::tensor(std::vector<int64_t>{12, 9});
  model->eval();
  torch::NoGradGuard no_grad;
  for (int64_t r : {3, 2, 1}) {
    model->set_reduction_factor(r);
    auto out = model->forward(text, text_lengths, mel, mel_lengths);
    EXPECT_EQ(out.mel.sizes().vec(), (std::vector<int64_t>{2, 12, kMels})) << "r " << r;
    EXPECT_EQ(out.gate.sizes().vec(), (std::vector<int64_t>{2, 12})) << "r " << r;
    EXPECT_EQ(out.alignments.size(1), 12 / r) << "r " << r;
    EXPECT_TRUE(torch::isfinite(out.mel).all().item<bool>());
  }
  EXPECT_EQ(shapes(*model).size(), count);
  EXPECT_THROW(model->set_reduction_factor(4), tts::Error);

  // At r = 1 the first decoder step predicts what the first frame of r = 3 predicts: the same
  // rows of the same projection, from the same state (the first step reads the zero go frame).
  model->set_reduction_factor(1);
  auto one = model->forward(text, text_lengths, mel, mel_lengths);
  model->set_reduction_factor(3);
  auto three = model->forward(text, text_lengths, mel, mel_lengths);
  EXPECT_TRUE(torch::allclose(one.mel.select(1, 0), three.mel.select(1, 0), 1e-5, 1e-6));
}
