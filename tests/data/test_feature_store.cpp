// The feature-store reader: settings validation against the config (every kind of mismatch, the
// 1025-vs-513 case), utterance lists, data.max_frames, and the per-file .npy checks.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "store/make_store.h"
#include "tts/core/error.h"
#include "tts/data/feature_store.h"

namespace {

using tts::config::Config;
using tts::data::FeatureStore;

Config with(const std::vector<std::string>& overrides) {
  Config config;
  for (const auto& o : overrides) tts::config::apply_override(config, o);
  config.validate();
  return config;
}

// The UsageError message of opening a store made with `store_overrides` under a config with
// `config_overrides`; empty when it opens.
std::string open_error(const std::string& name, const std::vector<std::string>& store_overrides,
                       const std::vector<std::string>& config_overrides) {
  std::string dir = tts::test::make_store(tts::test::temp_dir(name), with(store_overrides),
                                          tts::test::varied_utterances(6), 2);
  try {
    FeatureStore::open(dir, with(config_overrides));
  } catch (const tts::UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(FeatureStore, OpensAMatchingStoreWithAbsolutePathsAndTexts) {
  Config config = with({"audio.linear=true"});
  auto utterances = tts::test::varied_utterances(10);
  std::string dir = tts::test::make_store(tts::test::temp_dir("fs_ok"), config, utterances, 3);
  FeatureStore store = FeatureStore::open(dir, config);
  ASSERT_EQ(store.val().size(), 3u);
  ASSERT_EQ(store.train().size(), 7u);
  EXPECT_EQ(store.val()[0].id, "u000");
  EXPECT_EQ(store.train()[0].id, "u003");
  EXPECT_EQ(store.train()[0].n_frames, utterances[3].frames);
  EXPECT_EQ(store.train()[0].text, utterances[3].text);
  EXPECT_EQ(store.train()[0].mel_path, dir + "/mels/u003.npy");
  EXPECT_EQ(store.train()[0].linear_path, dir + "/linear/u003.npy");
  EXPECT_TRUE(std::filesystem::exists(store.train()[0].mel_path));
  EXPECT_EQ(store.n_mels(), 80);
  EXPECT_EQ(store.n_linear(), 513);
  EXPECT_TRUE(store.has_linear());
  EXPECT_EQ(store.version(), TTS_VERSION);
}

TEST(FeatureStore, LinearBinsMismatchGivesBothBinCountsAndTheFix) {
  std::string dir = tts::test::temp_dir("fs_nfft");
  std::string message = open_error("fs_nfft", {"audio.n_fft=2048", "audio.linear=true"},
                                   {"audio.n_fft=1024", "audio.linear=true"});
  EXPECT_NE(message.find("features in " + dir +
                         " were made with audio.n_fft=2048 (linear targets have 1025 bins) but the "
                         "config says audio.n_fft=1024 (513 bins): re-run tts-train preprocess "
                         "with this config, or set audio.n_fft: 2048"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("(1 setting)"), std::string::npos) << message;
}

struct MismatchCase {
  std::string key;
  std::string stored;
  std::string wanted;
};

TEST(FeatureStore, EveryKindOfMismatchIsNamedWithBothValuesAndTheFix) {
  const std::vector<MismatchCase> cases = {
      {"audio.sample_rate", "16000", "22050"},
      {"audio.hop_length", "200", "256"},
      {"audio.win_length", "800", "1024"},
      {"audio.center", "false", "true"},
      {"audio.pad_mode", "constant", "reflect"},
      {"audio.n_mels", "40", "80"},
      {"audio.fmin", "55.0", "0.0"},
      {"audio.fmax", "7600.0", "8000.0"},
      {"audio.mel_scale", "htk", "slaney"},
      {"audio.mel_norm", "none", "slaney"},
      {"audio.preemphasis", "0.97", "0.0"},
      {"audio.magnitude_power", "2.0", "1.0"},
      {"audio.compression", "db", "log"},
      {"audio.log_floor", "0.0001", "1e-05"},
      {"text.symbol_set", "english_arpabet", "english"},
      {"text.cleaners", "[basic_cleaners]", "[english_cleaners]"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.key);
    std::string message = open_error("fs_kind", {c.key + "=" + c.stored}, {c.key + "=" + c.wanted});
    EXPECT_NE(message.find("were made with " + c.key + "=" + c.stored), std::string::npos)
        << message;
    EXPECT_NE(message.find("the config says " + c.key + "=" + c.wanted), std::string::npos)
        << message;
    EXPECT_NE(message.find("or set " + c.key + ": " + c.stored), std::string::npos) << message;
  }
}

TEST(FeatureStore, DbNormalizationFieldsAreCompared) {
  std::vector<std::string> db = {"audio.compression=db"};
  for (const auto& [key, stored, wanted] : std::vector<MismatchCase>{
           {"audio.min_level_db", "-120.0", "-100.0"},
           {"audio.ref_level_db", "25.0", "20.0"},
           {"audio.signal_normalization", "false", "true"},
           {"audio.symmetric", "false", "true"},
           {"audio.max_abs_value", "1.0", "4.0"},
           {"audio.allow_clipping", "false", "true"},
       }) {
    SCOPED_TRACE(key);
    auto store = db, config = db;
    store.push_back(key + "=" + stored);
    config.push_back(key + "=" + wanted);
    std::string message = open_error("fs_db", store, config);
    EXPECT_NE(message.find(key + "=" + stored + " but the config says " + key + "=" + wanted),
              std::string::npos)
        << message;
  }
  // With natural-log compression the dB fields mean nothing and are not compared.
  EXPECT_EQ(open_error("fs_db", {"audio.min_level_db=-120"}, {"audio.min_level_db=-100"}), "");
}

TEST(FeatureStore, ListsEveryMismatchInOneMessage) {
  std::string message = open_error("fs_many", {"audio.hop_length=200", "audio.n_mels=40"},
                                   {"audio.hop_length=256", "audio.n_mels=80"});
  EXPECT_NE(message.find("(2 settings)"), std::string::npos) << message;
  EXPECT_NE(message.find("audio.hop_length=200"), std::string::npos) << message;
  EXPECT_NE(message.find("audio.n_mels=40 (mel targets have 40 channels) but the config says "
                         "audio.n_mels=80 (80 channels)"),
            std::string::npos)
      << message;
}

TEST(FeatureStore, LinearTargetsRequiredByTheConfigMustBeInTheStore) {
  std::string message = open_error("fs_lin", {"audio.linear=false"}, {"audio.linear=true"});
  EXPECT_NE(message.find("audio.linear=false but the config says audio.linear=true"),
            std::string::npos)
      << message;
  message = open_error("fs_lin", {"audio.linear=false"}, {"model.predict_linear=true"});
  EXPECT_NE(message.find("no linear targets (audio.linear=false) but the config says "
                         "model.predict_linear=true"),
            std::string::npos)
      << message;
  // A store with linear targets serves a mel-only config.
  EXPECT_EQ(open_error("fs_lin", {"audio.linear=true"}, {"audio.linear=false"}), "");
}

TEST(FeatureStore, MaxFramesDropsLongUtterances) {
  Config config = with({"data.max_frames=50"});
  auto utterances = tts::test::varied_utterances(20);
  std::string dir = tts::test::make_store(tts::test::temp_dir("fs_max"), config, utterances, 0);
  FeatureStore store = FeatureStore::open(dir, config);
  size_t expected = 0;
  for (const auto& u : utterances) expected += u.frames <= 50 ? 1 : 0;
  ASSERT_LT(expected, utterances.size());
  EXPECT_EQ(store.train().size(), expected);
  for (const auto& u : store.train()) EXPECT_LE(u.n_frames, 50);
  EXPECT_THROW(FeatureStore::open(dir, with({"data.max_frames=5"})), tts::Error);
}

TEST(FeatureStore, MissingOrMalformedFilesNameTheFileAndLine) {
  Config config;
  std::string dir =
      tts::test::make_store(tts::test::temp_dir("fs_bad"), config, tts::test::varied_utterances(4));
  std::filesystem::remove(dir + "/features.yaml");
  try {
    FeatureStore::open(dir, config);
    FAIL() << "opened a store without features.yaml";
  } catch (const tts::Error& e) {
    EXPECT_NE(std::string(e.what()).find(dir + "/features.yaml: not found"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("tts-train preprocess"), std::string::npos);
  }
  tts::test::make_store(dir, config, tts::test::varied_utterances(4));
  std::ofstream(dir + "/train.tsv", std::ios::app) << "u999\tmany\t1\tmels/u999.npy\t-\tx\n";
  try {
    FeatureStore::open(dir, config);
    FAIL() << "read a malformed train.tsv";
  } catch (const tts::Error& e) {
    EXPECT_NE(std::string(e.what()).find(dir + "/train.tsv line 6 (utterance u999): n_frames "
                                               "'many' is not an integer"),
              std::string::npos)
        << e.what();
  }
}

// features.yaml is read, never re-emitted: an alias chain nesting 100,000 levels (yaml-cpp's
// emitter recursed once per level) and a version that is no string are errors naming the file,
// the line and the key.
TEST(FeatureStore, HostileFeaturesYamlIsAClearError) {
  Config config;
  std::string dir = tts::test::make_store(tts::test::temp_dir("fs_yaml"), config,
                                          tts::test::varied_utterances(4));
  auto open_message = [&](const std::string& yaml) {
    std::ofstream(dir + "/features.yaml", std::ios::trunc) << yaml;
    try {
      FeatureStore::open(dir, config);
    } catch (const tts::Error& e) {
      return std::string(e.what());
    }
    return std::string("(opened)");
  };
  std::string chain = "chain: [&a [1]";
  for (int i = 0; i < 100000; ++i) chain += ", &a [*a]";
  chain += "]\naudio:\n  n_fft: *a\ntext: {}\n";
  std::string message = open_message(chain);
  EXPECT_NE(message.find(dir + "/features.yaml line 3: audio.n_fft: expected an integer, found a "
                               "list '[[[[...]]]]'"),
            std::string::npos)
      << message.substr(0, 400);
  message = open_message("tts_train_version: [1, 2]\naudio: {}\ntext: {}\n");
  EXPECT_NE(message.find(dir + "/features.yaml line 1: tts_train_version: expected a version "
                               "string"),
            std::string::npos)
      << message;
}

// Writes a .npy with an arbitrary dtype string and raw bytes.
void write_raw_npy(const std::string& path, const std::string& dtype, const std::string& shape,
                   size_t data_bytes) {
  std::string header =
      "{'descr': '" + dtype + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  uint16_t length = static_cast<uint16_t>(header.size());
  out.write(reinterpret_cast<const char*>(&length), 2);
  out << header << std::string(data_bytes, '\0');
}

TEST(FeatureStore, FeatureFileChecksNameTheFileTheUtteranceAndTheProblem) {
  std::string dir = tts::test::temp_dir("fs_npy");
  std::filesystem::create_directories(dir);
  std::string path = dir + "/u1.npy";
  std::vector<float> data(12 * 80, 0.5f);

  tts::formats::write_npy(path, data.data(), {12, 80});
  EXPECT_FALSE(tts::data::check_feature_file(path, "u1", 80, 12).has_value());

  auto problem = tts::data::check_feature_file(path, "u1", 513, 12);
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(*problem, path + " (utterance u1): 80 bins, expected 513 (shape [12, 80])");

  problem = tts::data::check_feature_file(path, "u1", 80, 13);
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(*problem, path + " (utterance u1): 12 frames, metadata says 13");

  tts::formats::write_npy(path, data.data(), {12, 8, 10});
  problem = tts::data::check_feature_file(path, "u1", 80, 12);
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("3-D array of shape [12, 8, 10], expected 2-D"), std::string::npos)
      << *problem;

  write_raw_npy(path, "<f8", "(12, 80)", 12 * 80 * 8);
  problem = tts::data::check_feature_file(path, "u1", 80, 12);
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("(utterance u1): dtype '<f8', expected float32"), std::string::npos)
      << *problem;

  write_raw_npy(path, "<f4", "(12, 80)", 100);  // truncated
  problem = tts::data::check_feature_file(path, "u1", 80, 12);
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("truncated"), std::string::npos) << *problem;

  std::ofstream(path) << "not an npy file";
  problem = tts::data::check_feature_file(path, "u1", 80, 12);
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->rfind(path + " (utterance u1): ", 0), 0u) << *problem;

  problem = tts::data::check_feature_file(dir + "/missing.npy", "u9", 80, 12);
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("(utterance u9)"), std::string::npos) << *problem;
}

}  // namespace
