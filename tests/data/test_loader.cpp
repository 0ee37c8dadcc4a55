// The prefetching loader: every utterance of a rank's shard in the sampler's order whatever the
// number of workers, values as stored, resuming mid-epoch, and bad .npy files (skipped with a
// count without changing the number of steps, or an error naming the file and the utterance).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "store/make_store.h"
#include "tts/core/error.h"
#include "tts/data/loader.h"

namespace {

using tts::config::Config;
using tts::data::Batch;
using tts::data::FeatureStore;
using tts::data::Loader;

// The one phase of a run without train.r_schedule.
tts::data::Phase phase_of(const Config& config) {
  return {config.model.n_frames_per_step, config.train.batch_size};
}

std::vector<int64_t> tokenize(const std::string& text) {
  std::vector<int64_t> ids;
  for (char c : text) ids.push_back(c - 'a' + 1);
  return ids;
}

Config small_config(int workers) {
  Config config;
  config.train.batch_size = 4;
  config.model.n_frames_per_step = 2;
  config.data.num_workers = workers;
  config.data.prefetch_batches = 2;
  config.data.sort_pool_batches = 2;
  return config;
}

std::vector<Batch> drain(Loader& loader) {
  std::vector<Batch> batches;
  while (auto batch = loader.next()) batches.push_back(std::move(*batch));
  return batches;
}

// Every rank knows its global batch's real frames and guided-attention pairs from the sampler's
// plan (the loss weighting of data-parallel training needs no collective): the sum of all ranks'
// batches at that step, also when resuming mid-epoch; both are counted on the host at collation.
TEST(Loader, KnowsTheRealFramesOfTheWholeGlobalBatch) {
  Config config = small_config(1);
  config.model.n_frames_per_step = 3;
  auto utterances = tts::test::varied_utterances(30);
  std::string dir = tts::test::make_store(tts::test::temp_dir("ld_global"), config, utterances, 3);
  FeatureStore store = FeatureStore::open(dir, config);
  const int world = 3;
  for (int64_t skip : {0, 1}) {
    std::vector<std::vector<Batch>> per_rank;
    for (int rank = 0; rank < world; ++rank) {
      Loader loader(store, store.train(), config, phase_of(config), tokenize, rank, world);
      loader.start_epoch(2, skip);
      per_rank.push_back(drain(loader));
      ASSERT_EQ(per_rank.back().size(), per_rank.front().size());
    }
    ASSERT_GT(per_rank[0].size(), 0u);
    for (size_t step = 0; step < per_rank[0].size(); ++step) {
      int64_t sum = 0;
      int64_t pairs = 0;
      for (int rank = 0; rank < world; ++rank) {
        const Batch& batch = per_rank[rank][step];
        EXPECT_EQ(batch.real_frames(), batch.mel_lengths.sum().item<int64_t>());
        sum += batch.real_frames();
        torch::Tensor steps = (batch.mel_lengths + 2).div(3, "floor");  // r = 3, rounded up
        EXPECT_EQ(batch.attention_pair_count, (steps * batch.text_lengths).sum().item<int64_t>());
        pairs += batch.attention_pair_count;
      }
      for (int rank = 0; rank < world; ++rank) {
        EXPECT_EQ(per_rank[rank][step].global_real_frames, sum) << "step " << step;
        EXPECT_EQ(per_rank[rank][step].global_attention_pairs, pairs) << "step " << step;
      }
    }
  }
}

TEST(Loader, LoadsEveryUtteranceOfItsShardWithStoredValuesWhateverTheWorkers) {
  Config config = small_config(0);
  config.audio.linear = true;
  auto utterances = tts::test::varied_utterances(30);
  std::string dir = tts::test::make_store(tts::test::temp_dir("ld_all"), config, utterances, 3);
  FeatureStore store = FeatureStore::open(dir, config);
  const int world = 2;
  std::vector<std::vector<std::string>> reference;  // ids per batch, rank 0, workers = 0
  for (int workers : {0, 1, 3}) {
    SCOPED_TRACE("workers " + std::to_string(workers));
    config.data.num_workers = workers;
    std::set<std::string> seen;
    for (int rank = 0; rank < world; ++rank) {
      Loader loader(store, store.train(), config, phase_of(config), tokenize, rank, world);
      EXPECT_EQ(loader.batches_per_epoch(), 4);  // 27 utterances, 8 per global batch
      loader.start_epoch(3);
      std::vector<Batch> batches = drain(loader);
      ASSERT_EQ(static_cast<int64_t>(batches.size()), loader.batches_per_epoch());
      EXPECT_FALSE(loader.next().has_value());
      for (const Batch& batch : batches) {
        EXPECT_EQ(batch.mel.size(1) % 2, 0);
        ASSERT_TRUE(batch.linear.defined());
        EXPECT_EQ(batch.linear.size(2), 513);
        for (int64_t i = 0; i < batch.size(); ++i) {
          const std::string& id = batch.ids[i];
          EXPECT_TRUE(seen.insert(id).second) << id << " twice";
          size_t index = std::stoul(id.substr(1));
          int64_t frames = utterances[index].frames;
          EXPECT_EQ(batch.mel_lengths[i].item<int64_t>(), frames);
          EXPECT_EQ(batch.text_lengths[i].item<int64_t>(),
                    static_cast<int64_t>(utterances[index].text.size()));
          EXPECT_FLOAT_EQ(batch.mel[i][frames - 1][5].item<float>(),
                          tts::test::feature_value(index, frames - 1, 5));
          EXPECT_FLOAT_EQ(batch.linear[i][0][500].item<float>(),
                          -tts::test::feature_value(index, 0, 500));
        }
      }
      if (rank == 0) {
        std::vector<std::vector<std::string>> ids;
        for (const Batch& batch : batches) ids.push_back(batch.ids);
        if (workers == 0) reference = ids;
        EXPECT_EQ(ids, reference);
      }
      EXPECT_GE(loader.wait_seconds(), 0.0);
    }
    EXPECT_EQ(seen.size(), store.train().size());
  }
}

TEST(Loader, ResumesMidEpochAndRestartsAnUnfinishedEpoch) {
  Config config = small_config(2);
  std::string dir = tts::test::make_store(tts::test::temp_dir("ld_resume"), config,
                                          tts::test::varied_utterances(40));
  FeatureStore store = FeatureStore::open(dir, config);
  Loader loader(store, store.train(), config, phase_of(config), tokenize, 0, 1);
  loader.start_epoch(1);
  std::vector<Batch> full = drain(loader);
  ASSERT_EQ(full.size(), 10u);
  loader.start_epoch(1);
  ASSERT_TRUE(loader.next().has_value());  // abandoned with batches still being loaded
  loader.start_epoch(1, 7);
  std::vector<Batch> tail = drain(loader);
  ASSERT_EQ(tail.size(), 3u);
  for (size_t i = 0; i < tail.size(); ++i) {
    EXPECT_EQ(tail[i].ids, full[7 + i].ids);
    EXPECT_TRUE(tail[i].mel.equal(full[7 + i].mel));
  }
}

// Overwrites utterance `id`'s mel with one of `bins` bins and `frames` frames.
void corrupt(const std::string& dir, const std::string& id, int64_t frames, int64_t bins) {
  std::vector<float> data(frames * bins, 1.0f);
  tts::formats::write_npy(dir + "/mels/" + id + ".npy", data.data(), {frames, bins});
}

TEST(Loader, SkipsABadFileWithACountKeepingTheNumberOfSteps) {
  for (int workers : {0, 2}) {
    Config config = small_config(workers);
    auto utterances = tts::test::varied_utterances(16);
    std::string dir = tts::test::make_store(tts::test::temp_dir("ld_skip"), config, utterances);
    corrupt(dir, "u005", utterances[5].frames, 81);      // wrong bins
    corrupt(dir, "u009", utterances[9].frames + 1, 80);  // frames != metadata
    FeatureStore store = FeatureStore::open(dir, config);
    Loader loader(store, store.train(), config, phase_of(config), tokenize, 0, 1);
    for (int64_t epoch : {0, 1}) {
      loader.start_epoch(epoch);
      std::vector<Batch> batches = drain(loader);
      ASSERT_EQ(batches.size(), 4u);
      int64_t total = 0;
      for (const Batch& batch : batches) {
        total += batch.size();
        for (const auto& id : batch.ids) {
          EXPECT_NE(id, "u005");
          EXPECT_NE(id, "u009");
        }
      }
      EXPECT_EQ(total, 14);
    }
    EXPECT_EQ(loader.skipped_utterances(), 4);
  }
}

TEST(Loader, BadFileStopsTheRunWhenOnBadFileIsError) {
  for (int workers : {0, 2}) {
    Config config = small_config(workers);
    config.data.on_bad_file = tts::config::OnBadFile::kError;
    auto utterances = tts::test::varied_utterances(8);
    std::string dir = tts::test::make_store(tts::test::temp_dir("ld_error"), config, utterances);
    corrupt(dir, "u003", utterances[3].frames, 81);
    FeatureStore store = FeatureStore::open(dir, config);
    Loader loader(store, store.train(), config, phase_of(config), tokenize, 0, 1);
    loader.start_epoch(0);
    try {
      drain(loader);
      FAIL() << "a bad file did not stop the epoch";
    } catch (const tts::Error& e) {
      std::string message = e.what();
      EXPECT_NE(message.find(dir + "/mels/u003.npy (utterance u003): 81 bins, expected 80"),
                std::string::npos)
          << message;
      EXPECT_NE(message.find("data.on_bad_file"), std::string::npos) << message;
    }
  }
}

TEST(Loader, BatchOfOnlyBadFilesStopsTheRun) {
  Config config = small_config(1);
  config.train.batch_size = 2;
  auto utterances = tts::test::varied_utterances(2);
  std::string dir = tts::test::make_store(tts::test::temp_dir("ld_allbad"), config, utterances);
  corrupt(dir, "u000", utterances[0].frames, 81);
  corrupt(dir, "u001", utterances[1].frames, 81);
  FeatureStore store = FeatureStore::open(dir, config);
  Loader loader(store, store.train(), config, phase_of(config), tokenize, 0, 1);
  loader.start_epoch(0);
  EXPECT_THROW(loader.next(), tts::Error);
}

TEST(Loader, UtterancesWithoutSymbolsAreLeftOutOnEveryRank) {
  Config config = small_config(0);
  auto utterances = tts::test::varied_utterances(10);
  utterances[4].text = "!!";
  std::string dir = tts::test::make_store(tts::test::temp_dir("ld_empty"), config, utterances);
  FeatureStore store = FeatureStore::open(dir, config);
  auto letters_only = [](const std::string& text) {
    std::vector<int64_t> ids;
    for (char c : text) {
      if (c >= 'a' && c <= 'z') ids.push_back(c - 'a' + 1);
    }
    return ids;
  };
  Loader loader(store, store.train(), config, phase_of(config), letters_only, 0, 1);
  EXPECT_EQ(loader.utterances().size(), 9u);
  loader.start_epoch(0);
  int64_t total = 0;
  for (const Batch& batch : drain(loader)) total += batch.size();
  EXPECT_EQ(total, 9);
}

// A store may hold transcripts preprocess would have skipped: one of 216,000 letters for a clip
// of a fraction of a second is left out, so that no batch is padded to its length.
TEST(Loader, TranscriptsPastTheTextBoundsAreLeftOut) {
  Config config = small_config(0);
  auto utterances = tts::test::varied_utterances(10);
  utterances[3].text = std::string(216000, 'a');
  utterances[6].text = std::string(2000, 'b');  // far more than 60 symbols a second
  std::string dir = tts::test::make_store(tts::test::temp_dir("ld_long_text"), config, utterances);
  FeatureStore store = FeatureStore::open(dir, config);
  auto letters = [](const std::string& text) { return std::vector<int64_t>(text.size(), 1); };
  Loader loader(store, store.train(), config, phase_of(config), letters, 0, 1);
  EXPECT_EQ(loader.utterances().size(), 8u);
  for (const auto& u : loader.utterances()) EXPECT_LT(u.text.size(), 2000u) << u.id;
}

}  // namespace
