// The chunks and windows of streamed speech: plans grow as they say and parse what --chunk takes;
// windows cover every output frame once, in order, with the context asked for (or the edge);
// a receptive field adds each layer's reach at its resolution.
#include <gtest/gtest.h>

#include "tts/core/error.h"
#include "tts/models/frame_windows.h"

using tts::models::ChunkPlan;
using tts::models::FrameWindows;
using tts::models::ReceptiveField;

TEST(FrameWindows, PlansGrowToTheirLargestAndParse) {
  const ChunkPlan plan{3, 20};
  EXPECT_EQ(plan.size(0), 3);
  EXPECT_EQ(plan.size(1), 6);
  EXPECT_EQ(plan.size(2), 12);
  EXPECT_EQ(plan.size(3), 20);
  EXPECT_EQ(plan.size(9), 20);
  EXPECT_EQ(ChunkPlan::whole().size(0), 0);
  const ChunkPlan parsed = tts::models::parse_chunk_plan("8:64", "--chunk");
  EXPECT_EQ(parsed.first, 8);
  EXPECT_EQ(parsed.most, 64);
  EXPECT_EQ(tts::models::parse_chunk_plan("5", "--chunk").most, 5);
  EXPECT_TRUE(tts::models::parse_chunk_plan("whole", "--chunk").is_whole());
  for (const char* bad : {"", "0", "8:4", "x", "-3", "1:99999", "3:", ":3", "1.5"}) {
    EXPECT_THROW(tts::models::parse_chunk_plan(bad, "--chunk"), tts::UsageError) << bad;
  }
}

TEST(FrameWindows, WindowsCoverEveryFrameOnceWithTheirContext) {
  for (const ChunkPlan& plan : {ChunkPlan::whole(), ChunkPlan{1, 1}, ChunkPlan{2, 7}}) {
    for (int64_t total : {1, 5, 23}) {
      FrameWindows windows(3, 2, plan);
      int64_t next = 0;
      for (int64_t received = 0; received <= total; ++received) {
        const bool complete = received == total;
        while (auto w = windows.next(received, complete)) {
          EXPECT_EQ(w->begin, next);
          EXPECT_GT(w->end, w->begin);
          EXPECT_EQ(w->input_begin, std::max<int64_t>(0, w->begin - 3));
          EXPECT_LE(w->input_end, received);
          EXPECT_TRUE(w->input_end >= w->end + 2 || w->input_end == total);
          next = w->end;
        }
      }
      EXPECT_EQ(next, total) << plan.describe() << ", " << total;
      EXPECT_EQ(windows.done(), total);
    }
  }
  // Fewer outputs than inputs (a decoder step past its stop frame): the windows end at the
  // outputs and still read the inputs past them.
  FrameWindows windows(1, 2, ChunkPlan::whole());
  auto w = windows.next(10, true, 7);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->end, 7);
  EXPECT_EQ(w->input_end, 9);
}

TEST(FrameWindows, AReceptiveFieldAddsEachLayersReachAtItsResolution) {
  ReceptiveField field;
  field.convolution(5);  // 2 frames each side
  EXPECT_EQ(field.left(), 2);
  field.convolution(3, 2);  // dilation 2: 2 more
  EXPECT_EQ(field.right(), 4);
  field.stretch(4);
  field.convolution(9);  // 4 samples at 4 a frame: one frame either side of a frame's samples
  EXPECT_EQ(field.scale(), 4);
  EXPECT_EQ(field.left(), 5);  // 2 + 2 + 1
  EXPECT_EQ(field.right(), 5);
  ReceptiveField a = field.branch(), b = field.branch();
  a.convolution(3);
  b.convolution(17);  // 8 samples more: 12 in all, 3 frames of 4
  field.widest_of(a, b);
  EXPECT_EQ(field.left(), 7);  // 2 + 2 + 3
  ReceptiveField up;
  up.transposed(16, 8, 4);  // jik876's first upsampling: a sample reads its frame and one more
  EXPECT_EQ(up.left(), 1);
  EXPECT_EQ(up.right(), 1);
}
