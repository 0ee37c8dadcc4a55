// The scheduler answers the loop's questions: which events are due after a step, when the run is
// done, what the end still owes, and when train.r_schedule enters a new phase.
#include <gtest/gtest.h>

#include "tts/config/config.h"
#include "tts/train/scheduler.h"

namespace {

tts::config::Config config_with(const std::vector<std::string>& overrides) {
  return tts::config::parse_config("", "test", overrides);
}

}  // namespace

TEST(Scheduler, IntervalsDecideTheEventsAfterEachStep) {
  tts::config::Config config =
      config_with({"train.log_interval=2", "train.val_interval=3", "train.checkpoint_interval=6",
                   "distributed.check_replicas_every=4"});
  tts::train::Scheduler scheduler(config, 0);
  std::vector<int64_t> logs, validations, saves, checks;
  for (int64_t step = 1; step <= 12; ++step) {
    tts::train::Events events = scheduler.after_step(step);
    if (events.log) logs.push_back(step);
    if (events.validate) validations.push_back(step);
    if (events.save) saves.push_back(step);
    if (events.check_replicas) checks.push_back(step);
  }
  EXPECT_EQ(logs, (std::vector<int64_t>{2, 4, 6, 8, 10, 12}));
  EXPECT_EQ(validations, (std::vector<int64_t>{3, 6, 9, 12}));
  EXPECT_EQ(saves, (std::vector<int64_t>{6, 12}));
  EXPECT_EQ(checks, (std::vector<int64_t>{4, 8, 12}));
  // Step 12 validated and saved: the end owes neither, only the unlogged interval if any.
  tts::train::Events end = scheduler.at_end(12, false, false);
  EXPECT_FALSE(end.validate || end.save || end.log);
}

TEST(Scheduler, TheEndOwesAValidationAndACheckpointUnlessStoppedOrDone) {
  tts::config::Config config = config_with({"train.val_interval=5", "train.checkpoint_interval=5"});
  tts::train::Scheduler finished(config, 7);
  for (int64_t step = 1; step <= 7; ++step) finished.after_step(step);
  tts::train::Events end = finished.at_end(7, false, true);
  EXPECT_TRUE(end.log && end.validate && end.save);
  // Stopped on request (a signal): a checkpoint, without the validation.
  tts::train::Scheduler stopped(config, 0);
  for (int64_t step = 1; step <= 3; ++step) stopped.after_step(step);
  end = stopped.at_end(3, true, false);
  EXPECT_TRUE(end.save);
  EXPECT_FALSE(end.validate);
  EXPECT_FALSE(end.log);
}

TEST(Scheduler, DoneAtMaxStepsOrMaxEpochs) {
  tts::config::Config config = config_with({"train.max_epochs=3"});
  tts::train::Scheduler scheduler(config, 10);
  tts::checkpoint::TrainingState state;
  EXPECT_FALSE(scheduler.done(state));
  state.step = 10;
  EXPECT_TRUE(scheduler.done(state));
  state.step = 4;
  state.epoch = 3;
  EXPECT_TRUE(scheduler.done(state));
  tts::train::Scheduler unlimited(config, 0);
  state.epoch = 1;
  state.step = 1000000;
  EXPECT_FALSE(unlimited.done(state));
}

TEST(Scheduler, APhaseSwitchIsAnsweredFromTheRSchedule) {
  tts::config::Config config = config_with({"train.r_schedule=[[0, 3, 4], [2, 2, 3], [4, 1, 2]]"});
  tts::train::Scheduler scheduler(config, 0);
  tts::checkpoint::TrainingState state;
  state.phase = {3, 4};
  state.step = 1;
  EXPECT_FALSE(scheduler.phase_switch(state).has_value());
  state.step = 2;
  ASSERT_TRUE(scheduler.phase_switch(state).has_value());
  EXPECT_EQ(*scheduler.phase_switch(state), (tts::data::Phase{2, 3}));
  state.phase = {2, 3};
  state.step = 3;
  EXPECT_FALSE(scheduler.phase_switch(state).has_value());
}
