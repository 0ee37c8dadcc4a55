// Static batch buffers (train.cuda_graphs): a batch is copied into fixed tensors of its shape,
// which keep their storage (a captured graph reads it), with its lengths and counts.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "tts/core/error.h"
#include "tts/data/batch.h"
#include "tts/data/length_buckets.h"
#include "tts/data/static_batch.h"

namespace {

tts::data::Batch batch_of(const std::vector<std::pair<int64_t, int64_t>>& sizes, float value,
                          tts::data::PadTo pad_to, bool with_speakers = false) {
  std::vector<tts::data::Example> examples;
  for (size_t i = 0; i < sizes.size(); ++i) {
    tts::data::Example e;
    e.id = "u" + std::to_string(i) + "_" + std::to_string(value);
    for (int64_t j = 0; j < sizes[i].first; ++j) e.text.push_back(1 + j);
    e.mel = torch::full({sizes[i].second, 3}, value);
    if (with_speakers) e.speaker = static_cast<int64_t>(i);
    examples.push_back(std::move(e));
  }
  tts::data::Batch batch = tts::data::collate(std::move(examples), 2, pad_to);
  batch.global_real_frames = batch.real_frame_count * 2;
  batch.global_attention_pairs = batch.attention_pair_count * 2;
  return batch;
}

}  // namespace

TEST(StaticBatch, TwoBatchesOfABucketShareTheShapeAndCopyInPlace) {
  const tts::data::LengthBuckets ladder =
      tts::data::make_length_buckets({4, 9, 6, 12}, {10, 30, 18, 40}, 2, 2);
  // Two batches of different longest lengths, both in bucket 0 of the ladder.
  // Buckets (6, 18) and (12, 40); both batches go to the second.
  ASSERT_EQ(ladder.frames, (std::vector<int64_t>{18, 40}));
  const std::optional<int> bucket = ladder.bucket_of(9, 30);
  ASSERT_EQ(bucket, 1);
  ASSERT_EQ(ladder.bucket_of(12, 35), bucket);
  const tts::data::PadTo pad{ladder.text[*bucket], ladder.frames[*bucket]};
  const tts::data::Batch first = batch_of({{9, 30}, {4, 10}}, 1.0f, pad);
  const tts::data::Batch second = batch_of({{12, 35}, {5, 12}}, 2.0f, pad);
  ASSERT_EQ(tts::data::shape_of(first), tts::data::shape_of(second));
  EXPECT_EQ(tts::data::shape_of(first).describe(), "B 2, r 2, text 12, frames 40, mels 3");

  tts::data::Batch buffers = tts::data::allocate_like(first, torch::kCPU);
  const void* text_storage = buffers.text.data_ptr();
  const void* mel_storage = buffers.mel.data_ptr();
  const void* counts_storage = buffers.counts.data_ptr();
  for (const tts::data::Batch* batch : {&first, &second}) {
    tts::data::copy_batch_into(buffers, *batch);
    EXPECT_EQ(buffers.text.data_ptr(), text_storage);
    EXPECT_EQ(buffers.mel.data_ptr(), mel_storage);
    EXPECT_EQ(buffers.counts.data_ptr(), counts_storage);
    for (auto [copy, original] : {std::pair{buffers.text, batch->text},
                                  {buffers.text_lengths, batch->text_lengths},
                                  {buffers.mel, batch->mel},
                                  {buffers.mel_lengths, batch->mel_lengths},
                                  {buffers.stop, batch->stop}}) {
      EXPECT_TRUE(torch::equal(copy, original));
    }
    EXPECT_EQ(buffers.ids, batch->ids);
    EXPECT_EQ(buffers.mel_length_values, batch->mel_length_values);
    EXPECT_EQ(buffers.text_length_values, batch->text_length_values);
    EXPECT_EQ(buffers.real_frame_count, batch->real_frame_count);
    EXPECT_EQ(buffers.global_real_frames, batch->global_real_frames);
    // The counts on the buffers' device, for a replayed step.
    EXPECT_EQ(buffers.counts[0].item<int64_t>(), batch->real_frame_count);
    EXPECT_EQ(buffers.counts[1].item<int64_t>(), batch->attention_pair_count);
    EXPECT_EQ(buffers.counts[2].item<int64_t>(), batch->global_real_frames);
    EXPECT_EQ(buffers.counts[3].item<int64_t>(), batch->global_attention_pairs);
  }
}

TEST(StaticBatch, ABatchOfAnotherShapeIsRefused) {
  const tts::data::Batch small = batch_of({{3, 8}, {2, 6}}, 1.0f, {});
  tts::data::Batch buffers = tts::data::allocate_like(small, torch::kCPU);
  for (const tts::data::Batch& other :
       {batch_of({{3, 8}, {2, 6}, {2, 4}}, 1.0f, {}),   // another batch size
        batch_of({{3, 8}, {2, 6}}, 1.0f, {5, 8}),       // longer text
        batch_of({{3, 8}, {2, 6}}, 1.0f, {3, 10}),      // more frames
        batch_of({{3, 8}, {2, 6}}, 1.0f, {}, true)}) {  // with speakers
    EXPECT_THROW(tts::data::copy_batch_into(buffers, other), tts::Error);
  }
  // A refused batch leaves the buffers as they were: the same storage (what a captured graph
  // reads), none of the other batch's tensors or host fields.
  tts::data::copy_batch_into(buffers, small);
  const void* mel = buffers.mel.data_ptr();
  const void* keys = buffers.utterance_keys.data_ptr();
  tts::data::Batch longer = batch_of({{3, 8}, {2, 6}}, 2.0f, {3, 10});
  EXPECT_THROW(tts::data::copy_batch_into(buffers, longer), tts::Error);
  EXPECT_EQ(buffers.mel.data_ptr(), mel);
  EXPECT_EQ(buffers.utterance_keys.data_ptr(), keys);
  EXPECT_TRUE(torch::equal(buffers.mel, small.mel));
  EXPECT_TRUE(buffers.counts.defined());
  EXPECT_EQ(buffers.mel_length_values, small.mel_length_values);
  tts::data::Batch not_static = small;  // no counts: not from allocate_like
  EXPECT_THROW(tts::data::copy_batch_into(not_static, small), tts::Error);
}

TEST(StaticBatch, SpeakersAndLinearTargetsAreBuffersToo) {
  tts::data::Batch batch = batch_of({{3, 8}, {2, 6}}, 1.0f, {}, true);
  tts::data::Batch buffers = tts::data::allocate_like(batch, torch::kCPU);
  EXPECT_TRUE(buffers.speakers.defined());
  EXPECT_FALSE(buffers.linear.defined());
  tts::data::copy_batch_into(buffers, batch);
  EXPECT_TRUE(torch::equal(buffers.speakers, batch.speakers));
  EXPECT_NE(tts::data::shape_of(batch).describe().find("speakers"), std::string::npos);
}
