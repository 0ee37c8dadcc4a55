// Side work of a training step (plots, samples, TensorBoard, metrics) never ends a run: the unit
// parts here (a sample too short for Griffin-Lim: test_render.cpp), the whole runs in
// test_train_side_work.cpp.
#include <gtest/gtest.h>

#include <stdexcept>

#include "tts/core/error.h"
#include "tts/train/metrics.h"

TEST(SideWork, AFailureIsReportedNotThrown) {
  bool ran = false;
  EXPECT_TRUE(tts::train::side_work("nothing", 3, [&] { ran = true; }));
  EXPECT_TRUE(ran);
  EXPECT_FALSE(tts::train::side_work("a plot", 3, [] { throw tts::Error("disk full"); }));
  EXPECT_FALSE(tts::train::side_work("a plot", 3, [] { throw std::runtime_error("bad"); }));
}
