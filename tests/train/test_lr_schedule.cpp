#include <gtest/gtest.h>

#include "tts/train/lr_schedule.h"

using tts::train::learning_rate_at;

TEST(LearningRate, ConstantIsTheConfiguredRate) {
  tts::config::TrainOptions options;
  options.learning_rate = 3e-4;
  EXPECT_DOUBLE_EQ(learning_rate_at(options, 1), 3e-4);
  EXPECT_DOUBLE_EQ(learning_rate_at(options, 100000), 3e-4);
}

TEST(LearningRate, ExponentialDecaysAfterTheStartAndStopsAtTheFloor) {
  tts::config::TrainOptions options;
  options.lr_schedule = tts::config::LrSchedule::kExponential;
  options.learning_rate = 1e-3;
  options.lr_decay_start = 40000;
  options.lr_decay_steps = 18000;
  options.lr_decay_rate = 0.5;
  options.lr_min = 1e-4;
  EXPECT_DOUBLE_EQ(learning_rate_at(options, 40000), 1e-3);
  EXPECT_NEAR(learning_rate_at(options, 58000), 5e-4, 1e-12);
  EXPECT_NEAR(learning_rate_at(options, 76000), 2.5e-4, 1e-12);
  EXPECT_DOUBLE_EQ(learning_rate_at(options, 1000000), 1e-4);
}

TEST(LearningRate, NoamWarmsUpLinearlyToThePeakThenDecaysAsInverseSqrt) {
  tts::config::TrainOptions options;
  options.lr_schedule = tts::config::LrSchedule::kNoam;
  options.learning_rate = 1e-3;
  options.warmup_steps = 100;
  EXPECT_NEAR(learning_rate_at(options, 50), 5e-4, 1e-12);
  EXPECT_NEAR(learning_rate_at(options, 100), 1e-3, 1e-12);
  EXPECT_NEAR(learning_rate_at(options, 400), 5e-4, 1e-12);
}

TEST(LearningRate, StaircaseHalvesEveryIntervalAsR9y9Does) {
  tts::config::TrainOptions options;
  options.lr_schedule = tts::config::LrSchedule::kStaircase;
  options.learning_rate = 1e-3;
  options.lr_decay_rate = 0.5;
  options.lr_decay_steps = 200;
  // r9y9's step_learning_rate_decay(init, global_step) with global_step the updates done before.
  EXPECT_DOUBLE_EQ(learning_rate_at(options, 1), 1e-3);
  EXPECT_DOUBLE_EQ(learning_rate_at(options, 200), 1e-3);
  EXPECT_DOUBLE_EQ(learning_rate_at(options, 201), 5e-4);
  EXPECT_DOUBLE_EQ(learning_rate_at(options, 601), 1.25e-4);
}

TEST(LearningRate, PerEpochDecaysOnceAnEpochAsHifiGanDoes) {
  tts::config::TrainOptions options;
  options.lr_schedule = tts::config::LrSchedule::kPerEpoch;
  options.learning_rate = 2e-4;
  options.lr_decay_rate = 0.999;
  EXPECT_DOUBLE_EQ(learning_rate_at(options, 1, 0), 2e-4);
  EXPECT_DOUBLE_EQ(learning_rate_at(options, 5000, 0), 2e-4);  // steps do not decay it
  EXPECT_NEAR(learning_rate_at(options, 5000, 3), 2e-4 * 0.999 * 0.999 * 0.999, 1e-18);
}
