// Where an epoch continues when the phase or the rank count changes: one rule for resuming and for
// r_schedule switches.
#include <gtest/gtest.h>

#include <cmath>

#include "tts/checkpoint/training_state.h"

using tts::checkpoint::TrainingState;

TEST(TrainingState, TheSameGlobalBatchContinuesAtTheSameBatchOnAnyRankCount) {
  TrainingState state;
  state.batch_in_epoch = 10;
  state.world_size = 2;
  state.phase = {1, 8};            // global batch 16
  state.continue_with({1, 4}, 4);  // global batch 16 again
  EXPECT_EQ(state.batch_in_epoch, 10);
  EXPECT_EQ(state.world_size, 4);
  EXPECT_EQ(state.phase, (tts::data::Phase{1, 4}));
  EXPECT_EQ(state.global_batch(), 16);
}

TEST(TrainingState, AnotherGlobalBatchContinuesAfterTheSameUtterances) {
  TrainingState state;
  state.batch_in_epoch = 10;
  state.world_size = 1;
  state.phase = {3, 16};               // 160 utterances consumed
  state.continue_with({2, 32}, 1);     // r_schedule: r 3 -> 2, batch 16 -> 32
  EXPECT_EQ(state.batch_in_epoch, 5);  // 5 x 32 = 160
  state.continue_with({2, 12}, 2);     // resumed on 2 ranks x 12: 160 / 24, rounded down
  EXPECT_EQ(state.batch_in_epoch, 6);
  EXPECT_EQ(state.phase.r, 2);
}

TEST(TrainingState, AFreshOrOlderStateCountsAsAGlobalBatchOfOne) {
  TrainingState fresh;  // no phase yet; older checkpoints may lack the batch size
  EXPECT_EQ(fresh.global_batch(), 1);
  fresh.continue_with({2, 8}, 3);
  EXPECT_EQ(fresh.batch_in_epoch, 0);
  EXPECT_EQ(fresh.global_batch(), 24);
}

TEST(TrainingState, ValidationsCountFromTheLowestLossAndANanIsNeverTheBest) {
  TrainingState state;
  EXPECT_FALSE(state.note_validation(NAN, 0));  // no best yet, and NaN cannot be one
  EXPECT_EQ(state.best_val_step, -1);
  EXPECT_EQ(state.validations_since_best, 1);
  EXPECT_TRUE(state.note_validation(2.0, 10));
  EXPECT_EQ(state.validations_since_best, 0);
  EXPECT_FALSE(state.note_validation(2.0, 20));  // equal is no improvement
  EXPECT_FALSE(state.note_validation(NAN, 30));
  EXPECT_EQ(state.validations_since_best, 2);
  EXPECT_TRUE(state.note_validation(1.5, 40));
  EXPECT_EQ(state.best_val_step, 40);
  EXPECT_EQ(state.best_val_loss, 1.5);
  EXPECT_EQ(state.validations_since_best, 0);
}
