// Frames and decoder steps under a reduction factor r: the one rounding every module uses.
#include <gtest/gtest.h>

#include "tts/core/frames.h"

TEST(Frames, DecoderStepsCoverEveryFrame) {
  EXPECT_EQ(tts::decoder_steps(0, 3), 0);
  EXPECT_EQ(tts::decoder_steps(1, 3), 1);
  EXPECT_EQ(tts::decoder_steps(6, 3), 2);
  EXPECT_EQ(tts::decoder_steps(7, 3), 3);
  EXPECT_EQ(tts::decoder_steps(7, 1), 7);
  for (int64_t r = 1; r <= 7; ++r) {
    for (int64_t frames = 1; frames <= 50; ++frames) {
      const int64_t steps = tts::decoder_steps(frames, r);
      EXPECT_GE(steps * r, frames);
      EXPECT_LT((steps - 1) * r, frames) << frames << " frames, r " << r;
    }
  }
}

TEST(Frames, PaddedFramesAreTheSmallestMultipleOfR) {
  EXPECT_EQ(tts::padded_frames(7, 3), 9);
  EXPECT_EQ(tts::padded_frames(9, 3), 9);
  EXPECT_EQ(tts::padded_frames(5, 1), 5);
  static_assert(tts::padded_frames(10, 4) == 12, "usable at compile time");
}
