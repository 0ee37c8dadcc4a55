// Every hostile file of tests/data/untrusted/ (README there) through every command that reads its
// kind: each ends in an error naming the file, exit code 1, within 60 s and 1.5 GiB of peak
// resident memory with no address-space cap (or, in a feature store with data.on_bad_file: skip,
// a skip naming it; in a corpus, a line of errors.tsv) and never in a signal, a hang,
// std::bad_alloc or an "unexpected" failure.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../data/store/make_store.h"
#include "cli_test_util.h"
#include "tts/config/config.h"
#include "tts/core/fs.h"

namespace fs = std::filesystem;
using tts::test::CliResult;

namespace {

const std::string kUntrusted = std::string(TTS_TEST_DATA_DIR) + "/untrusted";
const std::string kTiny = std::string(TTS_SOURCE_DIR) + "/configs/tiny.yaml";
const std::string kChirp = std::string(TTS_TEST_DATA_DIR) + "/audio/chirp_nvidia.wav";
// No address-space cap (a cap would turn a bomb into a clean-looking refusal): each command's
// peak resident memory is measured instead, and must stay far below what the old readers
// allocated for these files (4 GiB to 2 TiB) and far above what tts-train needs to refuse them.
constexpr long kPeakRssLimitKiB = 1536L * 1024;
constexpr int kTimeLimitSeconds = 60;
// The one file of the set that is sound (the lowest sample rate accepted).
const std::string kSoundFile = "wav_rate1000_ok.wav";

// The largest resident set of any child process this test has waited for (its descendants
// included: the shell waits for timeout, timeout for tts-train), in KiB.
long peak_child_rss_kib() {
  struct rusage usage {};
  getrusage(RUSAGE_CHILDREN, &usage);
  return usage.ru_maxrss;
}

// tts-train ARGS under a time limit, stdout and stderr together; fails the test when its peak
// resident memory passes kPeakRssLimitKiB (each test is its own process: the children's maximum
// is that of this test's commands, and it is checked after every one of them).
CliResult run_bounded(const std::string& args) {
  std::string command =
      "timeout " + std::to_string(kTimeLimitSeconds) + " " + TTS_CLI_PATH + " " + args + " 2>&1";
  CliResult result = tts::test::run_shell(command);
  EXPECT_LT(peak_child_rss_kib(), kPeakRssLimitKiB)
      << "peak resident memory " << peak_child_rss_kib() / 1024 << " MiB running: " << args;
  return result;
}

// The hostile files whose names end with one of `extensions`, sorted.
std::vector<std::string> files(const std::vector<std::string>& extensions) {
  std::vector<std::string> out;
  for (const auto& item : fs::directory_iterator(kUntrusted)) {
    std::string name = item.path().filename().string();
    for (const auto& ext : extensions) {
      if (name.size() > ext.size() &&
          name.compare(name.size() - ext.size(), ext.size(), ext) == 0 && name != kSoundFile) {
        out.push_back(name);
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Exit code 1 (a clean tts::Error: no signal, no time-out) and a message naming `name`.
void expect_refused(const CliResult& result, const std::string& name, const std::string& what) {
  EXPECT_EQ(result.exit_code, 1) << what << " " << name << ":\n" << result.output;
  EXPECT_NE(result.output.find(name), std::string::npos) << what << ":\n" << result.output;
  for (const char* bad : {"unexpected", "bad_alloc", "std::", "terminate"}) {
    EXPECT_EQ(result.output.find(bad), std::string::npos)
        << what << " " << name << " says '" << bad << "':\n"
        << result.output;
  }
}

// A small sound store made with tiny.yaml's settings, `n` utterances of 20 frames.
std::string sound_store(const std::string& dir, int n) {
  tts::config::Config config = tts::config::load_config(kTiny);
  std::vector<tts::test::StoreUtterance> utterances;
  for (int i = 0; i < n; ++i) {
    char id[16];
    std::snprintf(id, sizeof(id), "u%03d", i);
    utterances.push_back({id, 20, "a short text"});
  }
  return tts::test::make_store(dir, config, utterances, 1);
}

const std::string kQuickTrain =
    " --set train.max_steps=1 --set train.val_interval=1000 --set train.checkpoint_interval=1000 "
    "--set logging.samples=false --set data.num_workers=1";

}  // namespace

TEST(UntrustedInputs, ConvertRefusesEveryHostileCheckpoint) {
  std::string dir = tts::test::fresh_dir("untrusted_convert");
  std::vector<std::string> names = files({".pt"});
  ASSERT_GE(names.size(), 20u);
  for (const auto& name : names) {
    expect_refused(run_bounded("convert --from nvidia " + kUntrusted + "/" + name + " --config " +
                               kTiny + " --out " + dir + "/out.pt"),
                   name, "convert --from nvidia");
    EXPECT_FALSE(fs::exists(dir + "/out.pt")) << name;
  }
}

TEST(UntrustedInputs, InspectAndResumeRefuseEveryHostileCheckpoint) {
  std::string dir = tts::test::fresh_dir("untrusted_resume");
  std::string store = sound_store(dir + "/store", 4);
  for (const auto& name : files({".pt"})) {
    expect_refused(run_bounded("inspect " + kUntrusted + "/" + name), name, "inspect");
    // A run directory from elsewhere whose only checkpoint is the hostile file.
    std::string run = dir + "/run";
    fs::remove_all(run);
    fs::create_directories(run + "/checkpoints");
    fs::copy_file(kUntrusted + "/" + name, run + "/checkpoints/step_00000001.pt");
    CliResult result = run_bounded("train --config " + kTiny + " --data " + store + " --out " +
                                   run + " --resume" + kQuickTrain);
    expect_refused(result, "step_00000001.pt", "train --resume (" + name + ")");
  }
}

TEST(UntrustedInputs, InitFromRefusesEveryHostileCheckpoint) {
  std::string dir = tts::test::fresh_dir("untrusted_init");
  std::string store = sound_store(dir + "/store", 4);
  for (const auto& name : files({".pt"})) {
    expect_refused(run_bounded("train --config " + kTiny + " --data " + store + " --out " + dir +
                               "/run --init-from " + kUntrusted + "/" + name + kQuickTrain),
                   name, "train --init-from");
  }
}

TEST(UntrustedInputs, FeaturesRefusesEveryHostileNpyAndAudioFile) {
  std::string dir = tts::test::fresh_dir("untrusted_features");
  for (const auto& name : files({".npy"})) {
    expect_refused(run_bounded("features --config " + kTiny + " --mel " + kUntrusted + "/" + name +
                               " --griffin-lim " + dir + "/out.wav"),
                   name, "features --mel");
  }
  for (const auto& name : files({".wav", ".flac"})) {
    expect_refused(run_bounded("features --config " + kTiny + " --wav " + kUntrusted + "/" + name +
                               " --mel " + dir + "/out.npy"),
                   name, "features --wav");
  }
  CliResult sound = run_bounded("features --config " + kTiny + " --wav " + kUntrusted + "/" +
                                kSoundFile + " --mel " + dir + "/sound.npy");
  EXPECT_EQ(sound.exit_code, 0) << sound.output;
  // The measurement sees tts-train itself (libtorch alone is tens of MiB resident), not only
  // the shell.
  EXPECT_GT(peak_child_rss_kib(), 20 * 1024);
}

// A store whose utterances' mels are the hostile files (u001 is the first, ...): `data check`
// lists each, training with on_bad_file: skip skips each by name, with error stops at one.
TEST(UntrustedInputs, AStoreHoldingHostileNpyFilesSkipsOrRefusesThemByName) {
  std::string dir = tts::test::fresh_dir("untrusted_store");
  std::vector<std::string> names = files({".npy"});
  const int n = static_cast<int>(names.size()) + 4;
  std::string store = sound_store(dir + "/store", n);
  std::vector<std::string> paths;
  for (size_t i = 0; i < names.size(); ++i) {
    char id[16];
    std::snprintf(id, sizeof(id), "u%03d", static_cast<int>(i) + 4);
    std::string path = store + "/mels/" + id + ".npy";
    fs::copy_file(kUntrusted + "/" + names[i], path, fs::copy_options::overwrite_existing);
    paths.push_back(std::string(id) + ".npy");
  }
  CliResult check = run_bounded("data check --config " + kTiny + " --data " + store);
  EXPECT_EQ(check.exit_code, 1) << check.output;
  for (const auto& path : paths) {
    EXPECT_NE(check.output.find(path), std::string::npos) << path << ":\n" << check.output;
  }
  // One epoch in one step (u000 is the validation set): every training utterance is loaded.
  CliResult skip = run_bounded("train --config " + kTiny + " --data " + store + " --out " + dir +
                               "/skip --set data.on_bad_file=skip --set train.batch_size=" +
                               std::to_string(n - 1) + kQuickTrain);
  EXPECT_EQ(skip.exit_code, 0) << skip.output;
  for (const auto& path : paths) {
    EXPECT_NE(skip.output.find(path), std::string::npos) << path << ":\n" << skip.output;
  }
  CliResult error = run_bounded("train --config " + kTiny + " --data " + store + " --out " + dir +
                                "/error --set data.on_bad_file=error --set train.batch_size=" +
                                std::to_string(n - 1) + kQuickTrain);
  expect_refused(error, "mels/u0", "train with data.on_bad_file=error");
}

// A store whose features.yaml is a hostile one: `data check` and `train` refuse it by name.
TEST(UntrustedInputs, AStoreWithAHostileFeaturesYamlIsRefusedByName) {
  std::string dir = tts::test::fresh_dir("untrusted_features_yaml");
  std::vector<std::string> names = files({".yaml"});
  ASSERT_GE(names.size(), 2u);
  for (const auto& name : names) {
    std::string store = sound_store(dir + "/store", 4);
    fs::copy_file(kUntrusted + "/" + name, store + "/features.yaml",
                  fs::copy_options::overwrite_existing);
    expect_refused(run_bounded("data check --config " + kTiny + " --data " + store),
                   "features.yaml", "data check (" + name + ")");
    expect_refused(run_bounded("train --config " + kTiny + " --data " + store + " --out " + dir +
                               "/run" + kQuickTrain),
                   "features.yaml", "train (" + name + ")");
  }
}

TEST(UntrustedInputs, AStorePathLeavingTheStoreIsRefusedWithFileAndLine) {
  std::string dir = tts::test::fresh_dir("untrusted_paths");
  for (const std::string mel : {"../outside.npy", "/etc/passwd", "mels/../../outside.npy"}) {
    std::string store = sound_store(dir + "/store", 4);
    std::string tsv = tts::read_file(store + "/train.tsv");
    const std::string original = "mels/u001.npy";
    tsv.replace(tsv.find(original), original.size(), mel);
    std::ofstream(store + "/train.tsv", std::ios::trunc) << tsv;
    CliResult result = run_bounded("train --config " + kTiny + " --data " + store + " --out " +
                                   dir + "/run" + kQuickTrain);
    expect_refused(result, "train.tsv line 2", "a store path " + mel);
    EXPECT_NE(result.output.find("leaves the feature store"), std::string::npos) << result.output;
  }
}

// A corpus whose wavs/ hold the hostile audio files (FLAC under a .wav name: libsndfile reads by
// content): preprocess skips each into errors.tsv with its reason and keeps the sound ones.
TEST(UntrustedInputs, PreprocessSkipsEveryHostileAudioFileByName) {
  std::string dir = tts::test::fresh_dir("untrusted_preprocess");
  std::string corpus = dir + "/corpus";
  fs::create_directories(corpus + "/wavs");
  std::string metadata;
  for (int i = 0; i < 2; ++i) {
    std::string id = "sound" + std::to_string(i);
    fs::copy_file(kChirp, corpus + "/wavs/" + id + ".wav");
    metadata += id + "|A chirp of a test.|A chirp of a test.\n";
  }
  std::vector<std::string> ids;
  for (const auto& name : files({".wav", ".flac"})) {
    std::string id = fs::path(name).stem().string();
    fs::copy_file(kUntrusted + "/" + name, corpus + "/wavs/" + id + ".wav");
    metadata += id + "|Some text.|Some text.\n";
    ids.push_back(id);
  }
  std::ofstream(corpus + "/metadata.csv") << metadata;
  CliResult result =
      run_bounded("preprocess --config " + kTiny + " --input " + corpus + " --output " + dir +
                  "/feats --workers 2 --set data.max_skip_fraction=1 --set data.val_size=1");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  std::string errors = tts::read_file(dir + "/feats/errors.tsv");
  for (const auto& id : ids) {
    EXPECT_NE(errors.find(id), std::string::npos) << id << ":\n" << errors;
  }
}
