// Run folders and stores prepared by someone else: links planted where tts-train writes (logs,
// metrics, temporaries, checkpoints, report, outputs) or reads (checkpoints, a store's mels), a
// FIFO where a mel should be, a checkpoint name that smuggles text. Every command ends in exit
// code 1 with a message naming the file, in seconds, and the file the link points to, outside the
// folder, is unchanged.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "../data/store/make_store.h"
#include "cli_test_util.h"
#include "tts/audio/audio_io.h"
#include "tts/config/config.h"
#include "tts/core/fs.h"

namespace fs = std::filesystem;
using tts::test::CliResult;

namespace {

const std::string kTiny = std::string(TTS_SOURCE_DIR) + "/configs/tiny.yaml";
const std::string kOneStep =
    " --set train.max_steps=1 --set train.val_interval=1000 --set train.checkpoint_interval=1 "
    "--set logging.samples=false --set data.num_workers=1";
const std::string kPrecious = "# the victim's shell profile\n";

// tts-train ARGS with a time limit (a FIFO must not hang it), stdout and stderr together.
CliResult run_limited(const std::string& args) {
  return tts::test::run_shell("timeout 120 " + std::string(TTS_CLI_PATH) + " " + args + " 2>&1");
}

class HostileRunFolders : public ::testing::Test {
 protected:
  // A store of 4 utterances and a run of one step with its checkpoint, made once.
  static void SetUpTestSuite() {
    root_ = tts::test::fresh_dir("hostile");
    tts::config::Config config = tts::config::load_config(kTiny);
    std::vector<tts::test::StoreUtterance> utterances;
    for (int i = 0; i < 4; ++i) utterances.push_back({"u00" + std::to_string(i), 20, "a text"});
    store_ = tts::test::make_store(root_ + "/store", config, utterances, 1);
    good_run_ = root_ + "/good_run";
    CliResult trained = run_limited(train_args(good_run_, ""));
    ASSERT_EQ(trained.exit_code, 0) << trained.output;
  }

  static std::string train_args(const std::string& run, const std::string& extra) {
    return "train --config " + kTiny + " --data " + store_ + " --out " + run + extra + kOneStep;
  }

  // A copy of the good run, and a file outside it that an attacker wants changed.
  void SetUp() override {
    dir_ = tts::test::fresh_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    run_ = dir_ + "/run";
    fs::copy(good_run_, run_, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    outside_ = dir_ + "/profile";
    tts::write_file_atomic(outside_, kPrecious);
  }

  // `name` in the run replaced by a link to the outside file.
  void plant_link(const std::string& name) {
    fs::remove(run_ + "/" + name);
    fs::create_symlink(outside_, run_ + "/" + name);
  }

  // Exit code 1, `name` in the message, the outside file untouched.
  void expect_refused(const CliResult& result, const std::string& name) {
    EXPECT_EQ(result.exit_code, 1) << result.output;
    EXPECT_NE(result.output.find(name), std::string::npos) << name << ":\n" << result.output;
    EXPECT_EQ(tts::read_file(outside_), kPrecious) << "written through " << name;
  }

  static inline std::string root_;
  static inline std::string store_;
  static inline std::string good_run_;
  std::string dir_;
  std::string run_;
  std::string outside_;
};

}  // namespace

TEST_F(HostileRunFolders, ResumeRefusesLinkedLogsAndMetrics) {
  for (const char* name : {"train.log", "logs/rank_0.log", "metrics.jsonl"}) {
    SetUp();
    plant_link(name);
    expect_refused(run_limited(train_args(run_, " --resume --max-steps 2")), name);
  }
}

TEST_F(HostileRunFolders, ALinkedLogsFolderIsRefused) {
  fs::remove_all(run_ + "/logs");
  fs::create_directories(dir_ + "/elsewhere");
  fs::create_directory_symlink(dir_ + "/elsewhere", run_ + "/logs");
  expect_refused(run_limited(train_args(run_, " --resume --max-steps 2")), "logs");
  EXPECT_TRUE(fs::is_empty(dir_ + "/elsewhere"));
}

// The temporary the old writer used for config.yaml was RUN/config.yaml.tmp.<pid>: `exec` makes
// the shell's pid the command's, so the link sits exactly there. It must not be opened.
TEST_F(HostileRunFolders, APlantedTemporaryIsNeverOpened) {
  const std::string command = "ln -s " + outside_ + " " + run_ + "/config.yaml.tmp.$$ && exec " +
                              TTS_CLI_PATH + " " + train_args(run_, " --resume --max-steps 2") +
                              " 2>&1";
  CliResult result = tts::test::run_shell(command);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(tts::read_file(outside_), kPrecious);
  EXPECT_NE(tts::read_file(run_ + "/config.yaml"), kPrecious);
}

TEST_F(HostileRunFolders, ALinkedCheckpointIsNeitherReadNorReplaced) {
  const std::string name = "checkpoints/step_00000001.pt";
  fs::copy_file(run_ + "/" + name, outside_, fs::copy_options::overwrite_existing);
  const std::string before = tts::read_file(outside_);
  fs::remove(run_ + "/" + name);
  fs::create_symlink(outside_, run_ + "/" + name);
  for (const std::string& command :
       {train_args(run_, " --resume --max-steps 2"),
        "synthesize --checkpoint " + run_ + " --text hello --out " + dir_ + "/a.wav",
        "inspect " + run_ + "/checkpoints/latest"}) {
    CliResult result = run_limited(command);
    EXPECT_EQ(result.exit_code, 1) << command << ":\n" << result.output;
    EXPECT_NE(result.output.find("step_00000001.pt"), std::string::npos) << result.output;
    EXPECT_NE(result.output.find("symbolic link"), std::string::npos) << result.output;
  }
  EXPECT_EQ(tts::read_file(outside_), before);
}

// Saves killed before their rename leave step_N.pt.tmp.<16 hex> files: removed and logged when
// a run starts; a link or a folder of such a name, and other names, stay.
TEST_F(HostileRunFolders, TemporariesOfKilledSavesAreRemovedAtStart) {
  const std::string checkpoints = run_ + "/checkpoints/";
  for (const char* name : {"step_00000001.pt.tmp.0123456789abcdef",
                           "step_00000002.pt.tmp.fedcba9876543210", "notes.tmp.0123456789abcdef"}) {
    tts::write_file_atomic(checkpoints + name, std::string(4096, 'x'));
  }
  fs::create_symlink(outside_, checkpoints + "step_00000003.pt.tmp.00000000000000aa");
  CliResult result = run_limited(train_args(run_, " --resume --max-steps 2"));
  EXPECT_EQ(result.exit_code, 0) << result.output;
  for (const char* name :
       {"step_00000001.pt.tmp.0123456789abcdef", "step_00000002.pt.tmp.fedcba9876543210"}) {
    EXPECT_FALSE(fs::exists(checkpoints + name)) << name;
    EXPECT_NE(result.output.find("removed " + checkpoints + name), std::string::npos)
        << result.output;
  }
  EXPECT_TRUE(fs::exists(checkpoints + "notes.tmp.0123456789abcdef"));
  EXPECT_TRUE(fs::is_symlink(checkpoints + "step_00000003.pt.tmp.00000000000000aa"));
  EXPECT_EQ(tts::read_file(outside_), kPrecious);
}

// `step_1';CMD;#.pt` once counted as step 1, and its name reached a log line.
TEST_F(HostileRunFolders, OnlyStrictCheckpointNamesCount) {
  fs::rename(run_ + "/checkpoints/step_00000001.pt", run_ + "/checkpoints/step_1';touch x;#.pt");
  fs::remove(run_ + "/checkpoints/latest");
  CliResult result = run_limited(train_args(run_, " --resume --max-steps 2"));
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("no checkpoint in"), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("touch x"), std::string::npos) << result.output;
}

TEST_F(HostileRunFolders, ReportAndSynthesizeRefuseLinkedOutputs) {
  plant_link("report.html");
  expect_refused(run_limited("report " + run_), "report.html");
  plant_link("out.wav");
  expect_refused(
      run_limited("synthesize --checkpoint " + run_ + " --text hello --out " + run_ + "/out.wav"),
      "out.wav");
}

TEST_F(HostileRunFolders, AFifoOrALinkInAStoreIsRefusedByName) {
  const std::string store = dir_ + "/store";
  fs::copy(store_, store, fs::copy_options::recursive);
  fs::remove(store + "/mels/u001.npy");
  ASSERT_EQ(::mkfifo((store + "/mels/u001.npy").c_str(), 0644), 0);
  const auto start = std::chrono::steady_clock::now();
  CliResult fifo = run_limited("data check --config " + kTiny + " --data " + store);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  EXPECT_EQ(fifo.exit_code, 1) << fifo.output;  // 124 would be the time limit: a hang
  EXPECT_NE(fifo.output.find("mels/u001.npy"), std::string::npos) << fifo.output;
  EXPECT_NE(fifo.output.find("FIFO"), std::string::npos) << fifo.output;

  fs::remove(store + "/mels/u001.npy");
  fs::copy_file(store_ + "/mels/u001.npy", dir_ + "/outside.npy");
  fs::create_symlink(dir_ + "/outside.npy", store + "/mels/u001.npy");
  CliResult link = run_limited("data check --config " + kTiny + " --data " + store);
  EXPECT_EQ(link.exit_code, 1) << link.output;
  EXPECT_NE(link.output.find("mels/u001.npy"), std::string::npos) << link.output;
  EXPECT_NE(link.output.find("symbolic link"), std::string::npos) << link.output;
}

TEST_F(HostileRunFolders, ALinkedFolderInAStoreIsRefused) {
  const std::string store = dir_ + "/store";
  fs::copy(store_, store, fs::copy_options::recursive);
  fs::rename(store + "/mels", dir_ + "/outside_mels");
  fs::create_directory_symlink(dir_ + "/outside_mels", store + "/mels");
  CliResult result = run_limited("data check --config " + kTiny + " --data " + store);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find(store + "/mels"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("symbolic link"), std::string::npos) << result.output;
}

// A store folder prepared with links where preprocess writes: its tables and journal are
// replaced or removed (the links, never what they point to), a linked mel stops it by name.
TEST_F(HostileRunFolders, PreprocessNeverWritesThroughLinksInItsStore) {
  const std::string corpus = dir_ + "/corpus";
  fs::create_directories(corpus + "/wavs");
  std::vector<float> samples(22050);
  for (size_t i = 0; i < samples.size(); ++i) samples[i] = 0.5f * std::sin(0.05f * i);
  tts::write_file_atomic(corpus + "/metadata.csv", "a1|one text|one text\n");
  tts::audio::write_wav(corpus + "/wavs/a1.wav", samples, 22050);
  const std::string store = dir_ + "/store";
  fs::create_directories(store + "/mels");
  fs::create_directories(store + "/.preprocess");
  for (const char* name : {"features.yaml", "train.tsv", "val.tsv", "metadata.tsv", "errors.tsv",
                           ".preprocess/done.tsv", "mels/a1.npy"}) {
    fs::create_symlink(outside_, store + "/" + name);
  }
  CliResult result = run_limited("preprocess --config " + kTiny + " --input " + corpus +
                                 " --output " + store + " --workers 1");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("mels/a1.npy"), std::string::npos) << result.output;
  EXPECT_EQ(tts::read_file(outside_), kPrecious);
}
