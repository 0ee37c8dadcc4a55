// Training windows for vocoders: alignment of mel frames and samples, padding past an utterance's
// end, context frames, and the plan that makes W ranks x B the same windows as 1 rank x W*B.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "store/make_store.h"
#include "tts/core/error.h"
#include "tts/data/feature_store.h"
#include "tts/data/segments.h"

namespace {

namespace fs = std::filesystem;
using tts::data::SegmentBatch;
using tts::data::SegmentLoader;
using tts::data::SegmentSpec;
using tts::test::feature_value;
using tts::test::waveform_value;

const std::string kTmp = std::string(TTS_TEST_TMP_DIR) + "/segments";

tts::config::Config vocoder_config() {
  tts::config::Config config;
  config.model.kind = tts::config::ModelKind::kHifigan;
  config.audio.waveforms = true;
  config.audio.n_mels = 4;
  config.audio.hop_length = 8;
  return config;
}

// 12 utterances of 10 + (i * 37) % 90 frames; the first two are the validation set.
tts::data::FeatureStore store_of(const std::string& name) {
  tts::config::Config config = vocoder_config();
  std::string dir =
      tts::test::make_store(kTmp + "/" + name, config, tts::test::varied_utterances(12), 2);
  return tts::data::FeatureStore::open(dir, config);
}

SegmentSpec spec(int64_t frames, int64_t context = 0) {
  SegmentSpec s;
  s.frames = frames;
  s.hop = 8;
  s.context = context;
  s.mel_floor = -11.5f;
  return s;
}

// The store's utterance index of `id` (make_store numbers them "u000"...).
size_t index_of(const std::string& id) { return static_cast<size_t>(std::stoi(id.substr(1))); }

TEST(Segments, AWindowsMelFramesAndSamplesAreAligned) {
  tts::data::FeatureStore store = store_of("aligned");
  const tts::data::Utterance& u = store.train()[3];
  ASSERT_GT(u.n_frames, 12);
  const size_t index = index_of(u.id);
  const int64_t start = 5;
  std::vector<float> mel(4 * 6), audio(6 * 8);
  tts::data::read_window(u, start, spec(6), 4, mel.data(), audio.data());
  for (int64_t k = 0; k < 6; ++k) {
    for (int64_t m = 0; m < 4; ++m) {
      EXPECT_FLOAT_EQ(mel[m * 6 + k], feature_value(index, start + k, m));  // [n_mels, frames]
    }
  }
  for (int64_t s = 0; s < 48; ++s) EXPECT_FLOAT_EQ(audio[s], waveform_value(index, start * 8 + s));
}

TEST(Segments, PastTheEndIsSilenceAndContextRepeatsTheEdgeFrame) {
  tts::data::FeatureStore store = store_of("edges");
  const tts::data::Utterance& u = store.train()[0];
  const size_t index = index_of(u.id);
  const int64_t frames = u.n_frames + 3;  // longer than the utterance
  const int64_t width = frames + 2 * 2;
  std::vector<float> mel(4 * width), audio(frames * 8);
  tts::data::read_window(u, 0, spec(frames, 2), 4, mel.data(), audio.data());
  // Context before the start repeats frame 0; inside past the end is the floor; context after
  // the end repeats the last frame.
  EXPECT_FLOAT_EQ(mel[0 * width + 0], feature_value(index, 0, 0));
  EXPECT_FLOAT_EQ(mel[1 * width + 1], feature_value(index, 0, 1));
  EXPECT_FLOAT_EQ(mel[0 * width + 2], feature_value(index, 0, 0));
  EXPECT_FLOAT_EQ(mel[0 * width + 2 + u.n_frames - 1], feature_value(index, u.n_frames - 1, 0));
  EXPECT_FLOAT_EQ(mel[0 * width + 2 + u.n_frames], -11.5f);
  EXPECT_FLOAT_EQ(mel[3 * width + 2 + frames - 1], -11.5f);
  EXPECT_FLOAT_EQ(mel[0 * width + width - 1], feature_value(index, u.n_frames - 1, 0));
  for (int64_t s = 0; s < u.n_samples; ++s) ASSERT_FLOAT_EQ(audio[s], waveform_value(index, s));
  for (int64_t s = u.n_samples; s < frames * 8; ++s) ASSERT_EQ(audio[s], 0.0f);
}

TEST(Segments, WindowStartsAreUniformDeterministicAndIndependentOfTheRank) {
  std::set<int64_t> seen;
  for (int64_t epoch = 0; epoch < 400; ++epoch) {
    int64_t start = tts::data::window_start(7, epoch, "LJ001-0001", 30, 10);
    ASSERT_GE(start, 0);
    ASSERT_LE(start, 20);
    seen.insert(start);
    EXPECT_EQ(start, tts::data::window_start(7, epoch, "LJ001-0001", 30, 10));
  }
  EXPECT_EQ(seen.size(), 21u);  // every start is reachable
  EXPECT_EQ(tts::data::window_start(7, 3, "short", 5, 10), 0);
  EXPECT_NE(tts::data::window_start(7, 3, "a", 1000, 10),
            tts::data::window_start(8, 3, "a", 1000, 10));
}

// Every rank's batches of an epoch, in step order: batches[step][rank].
std::vector<std::vector<SegmentBatch>> epoch_of(const tts::data::FeatureStore& store, int batch,
                                                int world, int64_t epoch, bool background) {
  std::vector<std::vector<SegmentBatch>> steps;
  for (int rank = 0; rank < world; ++rank) {
    SegmentLoader loader(store.train(), 4, spec(6, 1), batch, rank, world, 1234, 2, background,
                         false);
    loader.start_epoch(epoch);
    for (size_t step = 0;; ++step) {
      std::optional<SegmentBatch> b = loader.next();
      if (!b) break;
      if (steps.size() <= step) steps.resize(step + 1);
      steps[step].push_back(std::move(*b));
    }
  }
  return steps;
}

TEST(Segments, TwoRanksOfTwoTrainOnTheWindowsOfOneRankOfFour) {
  tts::data::FeatureStore store = store_of("ranks");
  for (int64_t epoch : {0, 1, 5}) {
    auto one = epoch_of(store, 4, 1, epoch, true);
    auto two = epoch_of(store, 2, 2, epoch, false);
    ASSERT_EQ(one.size(), 2u);  // 10 training utterances: two global batches of 4, 2 wait
    ASSERT_EQ(two.size(), one.size());
    for (size_t step = 0; step < one.size(); ++step) {
      ASSERT_EQ(two[step].size(), 2u);
      torch::Tensor mel = torch::cat({two[step][0].mel, two[step][1].mel});
      torch::Tensor audio = torch::cat({two[step][0].audio, two[step][1].audio});
      EXPECT_TRUE(torch::equal(mel, one[step][0].mel)) << "epoch " << epoch << " step " << step;
      EXPECT_TRUE(torch::equal(audio, one[step][0].audio));
      EXPECT_EQ(one[step][0].mel.sizes(), (std::vector<int64_t>{4, 4, 8}));
      EXPECT_EQ(one[step][0].audio.sizes(), (std::vector<int64_t>{4, 1, 48}));
    }
  }
  // Another epoch draws other utterances and windows.
  EXPECT_FALSE(torch::equal(epoch_of(store, 4, 1, 0, true)[0][0].mel,
                            epoch_of(store, 4, 1, 1, true)[0][0].mel));
}

TEST(Segments, ResumingMidEpochGivesTheBatchesThatWereLeft) {
  tts::data::FeatureStore store = store_of("resume");
  SegmentLoader whole(store.train(), 4, spec(6), 2, 0, 1, 99, 1, true, false);
  whole.start_epoch(3);
  std::vector<SegmentBatch> all;
  while (auto b = whole.next()) all.push_back(std::move(*b));
  ASSERT_EQ(all.size(), 5u);
  SegmentLoader resumed(store.train(), 4, spec(6), 2, 0, 1, 99, 1, true, false);
  resumed.start_epoch(3, 3);
  for (size_t i = 3; i < all.size(); ++i) {
    std::optional<SegmentBatch> b = resumed.next();
    ASSERT_TRUE(b.has_value());
    EXPECT_TRUE(torch::equal(b->mel, all[i].mel));
    EXPECT_EQ(b->ids, all[i].ids);
  }
  EXPECT_FALSE(resumed.next().has_value());
}

// A table of speakers: each batch row carries its utterance's row of the table, whatever the
// rank; pinned or moved batches keep them; no table, no speakers; an unknown speaker is refused.
TEST(Segments, BatchesCarryEachUtterancesSpeakerRow) {
  tts::data::FeatureStore store = store_of("speakers");
  std::vector<tts::data::Utterance> utterances = store.train();
  std::map<std::string, int64_t> expected;
  for (size_t i = 0; i < utterances.size(); ++i) {
    utterances[i].speaker = i % 3 == 0 ? "ann" : (i % 3 == 1 ? "bob" : "cy");
    expected[utterances[i].id] = static_cast<int64_t>(i % 3 == 0 ? 2 : (i % 3 == 1 ? 0 : 1));
  }
  const std::vector<std::string> table{"bob", "cy", "ann"};
  size_t checked = 0;
  for (int rank = 0; rank < 2; ++rank) {
    SegmentLoader loader(utterances, 4, spec(6), 2, rank, 2, 5, 1, rank == 0, false, table);
    loader.start_epoch(1);
    while (std::optional<SegmentBatch> b = loader.next()) {
      SegmentBatch moved = b->to(torch::kCPU);
      ASSERT_TRUE(moved.speakers.defined());
      ASSERT_EQ(moved.speakers.scalar_type(), torch::kInt64);
      ASSERT_EQ(moved.speakers.sizes(), (std::vector<int64_t>{2}));
      for (int64_t i = 0; i < moved.size(); ++i) {
        EXPECT_EQ(moved.speakers[i].item<int64_t>(), expected.at(moved.ids[i])) << moved.ids[i];
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 8u);  // two global batches of 4 from 10 utterances
  SegmentLoader plain(utterances, 4, spec(6), 2, 0, 1, 5, 1, false, false);
  plain.start_epoch(0);
  EXPECT_FALSE(plain.next()->speakers.defined());
  try {
    SegmentLoader loader(utterances, 4, spec(6), 2, 0, 1, 5, 1, false, false, {"bob", "cy"});
    FAIL() << "an utterance of ann was accepted by a table without her";
  } catch (const tts::Error& e) {
    EXPECT_NE(std::string(e.what()).find("its speaker 'ann' is not in the model's speaker table "
                                         "(2 speakers: bob, cy)"),
              std::string::npos)
        << e.what();
  }
}

TEST(Segments, TooFewUtterancesForOneGlobalBatchIsAClearError) {
  tts::data::FeatureStore store = store_of("few");
  try {
    SegmentLoader loader(store.train(), 4, spec(6), 8, 0, 2, 1, 1, true, false);
    FAIL() << "16 utterances were promised from 10";
  } catch (const tts::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot fill one global batch of 16"), std::string::npos)
        << e.what();
  }
}

TEST(Segments, AWaveformOfTheWrongLengthNamesTheFileAndTheUtterance) {
  tts::data::FeatureStore store = store_of("bad");
  const tts::data::Utterance& u = store.train()[0];
  std::vector<float> shorter(10, 0.0f);
  tts::formats::write_npy(u.waveform_path, shorter.data(), {10});
  SegmentLoader loader(store.train(), 4, spec(6), 10, 0, 1, 1, 1, true, false);
  loader.start_epoch(0);
  try {
    loader.next();
    FAIL() << "a short waveform was read";
  } catch (const tts::Error& e) {
    std::string message = e.what();
    EXPECT_NE(message.find(u.waveform_path), std::string::npos) << message;
    EXPECT_NE(message.find(u.id), std::string::npos) << message;
    EXPECT_NE(message.find("shape [10]"), std::string::npos) << message;
  }
}

}  // namespace
