// Length buckets (train.length_buckets): the ladder made from a length distribution, the bucket a
// batch goes to, the ladder a run folder records, collation up to a bucket, and the padding the
// buckets cost in a sampler's plan.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <numeric>
#include <tuple>

#include "../support/error_of.h"
#include "../support/scratch.h"
#include "tts/core/error.h"
#include "tts/data/batch.h"
#include "tts/data/length_buckets.h"
#include "tts/data/sampler.h"

using tts::data::LengthBuckets;
using tts::data::make_length_buckets;

namespace {

using tts::test::error_of;

}  // namespace

TEST(LengthBuckets, BoundariesAreQuantilesOfTheFramesRoundedToTheMultiple) {
  // 8 utterances, frames 10..80; text grows with frames but for one long text in a short one.
  const std::vector<int64_t> frames = {50, 10, 80, 20, 60, 30, 70, 40};
  const std::vector<int64_t> text = {9, 3, 14, 25, 10, 6, 12, 7};
  const LengthBuckets ladder = make_length_buckets(text, frames, 4, 3);
  // Quantiles 2/8, 4/8, 6/8, 8/8 of the frames: 20, 40, 60, 80, rounded up to multiples of 3.
  EXPECT_EQ(ladder.frames, (std::vector<int64_t>{21, 42, 60, 81}));
  // The longest text under each frame boundary, never below the bucket before's.
  EXPECT_EQ(ladder.text, (std::vector<int64_t>{25, 25, 25, 25}));
  EXPECT_EQ(ladder.frame_multiple, 3);
}

TEST(LengthBuckets, TextBoundariesFollowTheFramesAndTheLastHoldsTheLongest) {
  std::vector<int64_t> frames(100);
  std::vector<int64_t> text(100);
  for (int64_t i = 0; i < 100; ++i) {
    frames[i] = 100 + 7 * ((i * 37) % 100);  // a permutation of 100..793
    text[i] = 5 + frames[i] / 10;
  }
  const LengthBuckets ladder = make_length_buckets(text, frames, 5, 2);
  ASSERT_EQ(ladder.size(), 5);
  EXPECT_EQ(ladder.frames.back(), 794);  // 793 rounded up to a multiple of 2
  EXPECT_EQ(ladder.text.back(), 5 + 793 / 10);
  for (int i = 1; i < ladder.size(); ++i) {
    EXPECT_GT(ladder.frames[i], ladder.frames[i - 1]);
    EXPECT_GE(ladder.text[i], ladder.text[i - 1]);
  }
  // Every utterance fits a bucket; a batch goes to the first that holds both of its lengths.
  for (int64_t i = 0; i < 100; ++i) {
    ASSERT_TRUE(ladder.bucket_of(text[i], frames[i]).has_value()) << i;
  }
  EXPECT_EQ(ladder.bucket_of(1, 1), 0);
  EXPECT_EQ(ladder.bucket_of(ladder.text[0] + 1, 1), 1);  // text alone moves it up
  EXPECT_EQ(ladder.bucket_of(1, ladder.frames[2] + 1), 3);
  EXPECT_EQ(ladder.bucket_of(ladder.text.back() + 1, 1), std::nullopt);
  EXPECT_EQ(ladder.bucket_of(1, ladder.frames.back() + 1), std::nullopt);
}

TEST(LengthBuckets, QuantilesThatRoundAlikeMerge) {
  // Ten utterances of one length: one bucket, whatever the count asked for.
  const LengthBuckets ladder =
      make_length_buckets(std::vector<int64_t>(10, 4), std::vector<int64_t>(10, 33), 8, 1);
  EXPECT_EQ(ladder.frames, (std::vector<int64_t>{33}));
  EXPECT_EQ(ladder.text, (std::vector<int64_t>{4}));
  // More buckets than utterances: at most one per utterance.
  EXPECT_EQ(make_length_buckets({1, 2}, {5, 9}, 16, 1).size(), 2);
}

TEST(LengthBuckets, BadArgumentsAreErrors) {
  EXPECT_THROW(make_length_buckets({1}, {5}, 0, 1), tts::Error);
  EXPECT_THROW(make_length_buckets({1}, {5}, tts::config::kMaxLengthBuckets + 1, 1), tts::Error);
  EXPECT_THROW(make_length_buckets({}, {}, 2, 1), tts::Error);
  EXPECT_THROW(make_length_buckets({1, 2}, {5}, 2, 1), tts::Error);
  EXPECT_THROW(make_length_buckets({0}, {5}, 2, 1), tts::Error);
  EXPECT_THROW(make_length_buckets({1}, {5}, 2, 0), tts::Error);
}

TEST(LengthBuckets, TheRecordedLadderReadsBackAndAnythingElseIsRefused) {
  const LengthBuckets ladder = make_length_buckets({3, 8, 5, 12}, {10, 40, 22, 61}, 3, 2);
  EXPECT_EQ(LengthBuckets::parse(ladder.format(), "RUN/length_buckets.txt"), ladder);
  for (const std::string bad :
       {"", "frame_multiple 2\n", "frame_multiple 0\n3 10\n", "frame_multiple 2\n3 11\n",
        "frame_multiple 2\n3 10\n2 20\n", "frame_multiple 2\n3 10\n4 10\n", "frame_multiple 2\n3\n",
        "frame_multiple 2\n3 x\n", "buckets 2\n3 10\n", "frame_multiple 2\n-3 10\n"}) {
    EXPECT_THROW(LengthBuckets::parse(bad, "RUN/length_buckets.txt"), tts::Error) << bad;
  }
  std::string many = "frame_multiple 1\n";
  for (int i = 1; i <= tts::config::kMaxLengthBuckets + 1; ++i) {
    many += std::to_string(i) + " " + std::to_string(i) + "\n";
  }
  try {
    LengthBuckets::parse(many, "RUN/length_buckets.txt");
    FAIL() << "a ladder past the bucket limit was read";
  } catch (const tts::Error& e) {
    EXPECT_NE(std::string(e.what()).find("RUN/length_buckets.txt"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("more than 64 buckets"), std::string::npos) << e.what();
  }
}

TEST(LengthBuckets, AMalformedLadderIsRefusedNamingTheFileTheLineAndTheFix) {
  const std::string where = "RUN/length_buckets.txt";
  // Each: the text, the line the error names, what it says is wrong.
  const std::vector<std::tuple<std::string, int, std::string>> cases = {
      {"", 1, "an empty file"},
      {"frame_multiple 2\n", 2, "no buckets"},
      {"frame_multiple 2\n3 10\n\n", 3, "expected a row 'TEXT FRAMES'"},
      {"frame_multiple 2\n3 10\n4 12 1\n", 3, "expected a row 'TEXT FRAMES'"},
      {"frame_multiple 2\n3 10\n4 +12\n", 3, "expected a row 'TEXT FRAMES'"},
      {"frame_multiple 2\r\n3 10\n", 1, "expected 'frame_multiple R'"},
      {"frame_multiple 2000000000\n", 1, "expected 'frame_multiple R' with R in [1, 1000000000]"},
      {"frame_multiple 2\n3 10\n4 99999999999999999999\n", 3, "in [1, 1000000000]"},
      {"frame_multiple 2\n3 10\n5 11\n", 3, "not an ascending bucket"},
      {"frame_multiple 2 3 10\n", 1, "expected 'frame_multiple R'"},
  };
  for (const auto& [text, line, why] : cases) {
    const std::string message = error_of([&] { LengthBuckets::parse(text, where); });
    EXPECT_NE(message.find(where + ":" + std::to_string(line) + ": "), std::string::npos)
        << text << " -> " << message;
    EXPECT_NE(message.find(why), std::string::npos) << text << " -> " << message;
    EXPECT_NE(message.find("delete the file"), std::string::npos) << message;
  }
  // The last line needs no newline.
  EXPECT_EQ(LengthBuckets::parse("frame_multiple 2\n3 10\n4 12", where).frames,
            (std::vector<int64_t>{10, 12}));
}

// RUN/length_buckets.txt is read as a regular file of the run folder: a symlink out of it (to a
// file someone else owns, or a huge one) is refused, and so is a file past the size bound.
TEST(LengthBuckets, TheRecordedFileIsReadOnlyAsABoundedRegularFile) {
  namespace fs = std::filesystem;
  const std::string root = tts::test::fresh_dir("length_buckets");
  const std::string run = root + "/run";
  fs::create_directories(run);
  const LengthBuckets ladder = make_length_buckets({3, 8, 5, 12}, {10, 40, 22, 61}, 3, 2);
  const std::string outside = root + "/outside.txt";
  std::ofstream(outside) << ladder.format();
  EXPECT_EQ(LengthBuckets::read(outside), ladder);

  const std::string path = run + "/length_buckets.txt";
  fs::create_symlink(outside, path);
  std::string message = error_of([&] { LengthBuckets::read(path); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("is a symbolic link"), std::string::npos) << message;

  fs::remove(path);
  std::ofstream(path) << ladder.format() << std::string(tts::data::kMaxLengthBucketsFileBytes, ' ');
  message = error_of([&] { LengthBuckets::read(path); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("more than a length-bucket ladder's"), std::string::npos) << message;

  std::ofstream(path, std::ios::trunc) << "frame_multiple 2\n3 10\nfour 12\n";
  message = error_of([&] { LengthBuckets::read(path); });
  EXPECT_NE(message.find(path + ":3: "), std::string::npos) << message;
}

TEST(LengthBuckets, CollatePadsUpToTheBucketAsAfterAShorterUtterance) {
  std::vector<tts::data::Example> examples(2);
  examples[0].id = "a";
  examples[0].text = {4, 5, 6};
  examples[0].mel = torch::ones({5, 2});
  examples[1].id = "b";
  examples[1].text = {7};
  examples[1].mel = torch::ones({3, 2});
  const tts::data::Batch plain = tts::data::collate(examples, 2);
  const tts::data::Batch padded = tts::data::collate(examples, 2, tts::data::PadTo{7, 10});
  ASSERT_EQ(plain.text.sizes(), (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(plain.mel.size(1), 6);
  ASSERT_EQ(padded.text.sizes(), (std::vector<int64_t>{2, 7}));
  ASSERT_EQ(padded.mel.sizes(), (std::vector<int64_t>{2, 10, 2}));
  EXPECT_TRUE(torch::equal(padded.text.narrow(1, 0, 3), plain.text));
  EXPECT_EQ(padded.text.narrow(1, 3, 4).abs().sum().item<int64_t>(), 0);
  EXPECT_TRUE(torch::equal(padded.mel.narrow(1, 0, 6), plain.mel));
  EXPECT_EQ(padded.mel.narrow(1, 6, 4).abs().sum().item<float>(), 0);
  EXPECT_TRUE(torch::equal(padded.stop.narrow(1, 0, 6), plain.stop));
  EXPECT_EQ(padded.stop.narrow(1, 6, 4).min().item<float>(), 1);  // stop targets stay 1
  // Lengths and counts are the real ones.
  EXPECT_TRUE(torch::equal(padded.text_lengths, plain.text_lengths));
  EXPECT_TRUE(torch::equal(padded.mel_lengths, plain.mel_lengths));
  EXPECT_EQ(padded.real_frame_count, plain.real_frame_count);
  EXPECT_EQ(padded.attention_pair_count, plain.attention_pair_count);
  EXPECT_EQ(padded.padded_frames(), 20);
  // A bucket shorter than the batch pads to the batch's longest; frames not a multiple of r are
  // an error.
  EXPECT_EQ(tts::data::collate(examples, 2, tts::data::PadTo{1, 2}).mel.size(1), 6);
  EXPECT_THROW(tts::data::collate(examples, 2, tts::data::PadTo{7, 9}), tts::Error);
}

TEST(LengthBuckets, ThePlanMeasuresTheExtraPaddingOfTheBuckets) {
  std::vector<int64_t> frames(64);
  std::vector<int64_t> text(64);
  for (int64_t i = 0; i < 64; ++i) {
    frames[i] = 40 + (i * 29) % 200;
    text[i] = 3 + frames[i] / 8;
  }
  tts::data::BalancedSampler sampler(frames, 4, 2, 1234, 4);
  const tts::data::EpochPlan plan = sampler.plan(0);
  const tts::data::BatchStats plain = tts::data::measure_plan(plan, frames, 2);
  const tts::data::BatchStats none = tts::data::measure_plan(plan, frames, 2, text, {});
  EXPECT_DOUBLE_EQ(none.padding_fraction, plain.padding_fraction);
  EXPECT_GT(none.text_padding_fraction, 0);
  const tts::data::BatchStats four =
      tts::data::measure_plan(plan, frames, 2, text, make_length_buckets(text, frames, 4, 2));
  const tts::data::BatchStats one =
      tts::data::measure_plan(plan, frames, 2, text, make_length_buckets(text, frames, 1, 2));
  EXPECT_GT(four.padding_fraction, plain.padding_fraction);
  EXPECT_GT(one.padding_fraction, four.padding_fraction);  // one bucket: all to the longest
  EXPECT_GE(four.text_padding_fraction, none.text_padding_fraction);
  // A ladder from other lengths that a batch does not fit is an error.
  EXPECT_THROW(tts::data::measure_plan(plan, frames, 2, text, make_length_buckets({1}, {2}, 1, 2)),
               tts::Error);
}
