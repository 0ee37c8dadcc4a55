// Runs the real `tts-train preprocess`: exit codes, interruption by SIGKILL and SIGINT, resume.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tts/core/fs.h"
#include "tts/formats/npy.h"

namespace fs = std::filesystem;

namespace {

const std::string kTmp = std::string(TTS_TEST_TMP_DIR) + "/preprocess_command";
const std::string kCorpus = kTmp + "/corpus";
const std::string kConfig = std::string(TTS_SOURCE_DIR) + "/configs/tiny.yaml";
constexpr int kClips = 40;

// Starts `tts-train ARGS...` with stderr to `log`; returns its pid.
pid_t start_cli(const std::vector<std::string>& args, const std::string& log) {
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, STDERR_FILENO);
    dup2(fd, STDOUT_FILENO);
    std::vector<char*> argv{const_cast<char*>(TTS_CLI_PATH)};
    for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    execv(TTS_CLI_PATH, argv.data());
    _exit(127);
  }
  return pid;
}

// Waits for `pid`; returns its exit code, or 128 + signal when a signal ended it.
int wait_for(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int run_cli(const std::vector<std::string>& args, const std::string& log) {
  return wait_for(start_cli(args, log));
}

std::vector<std::string> preprocess_args(const std::string& out, int workers) {
  return {"preprocess", "--config",  kConfig,
          "--input",    kCorpus,     "--output",
          out,          "--workers", std::to_string(workers)};
}

int count_npy(const std::string& dir) {
  int count = 0;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    count += entry.path().extension() == ".npy" ? 1 : 0;
  }
  return count;
}

// Starts preprocessing and sends `signal` once the first utterances are written.
int interrupt_run(const std::string& out, int signal) {
  pid_t pid = start_cli(preprocess_args(out, 1), out + ".log");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (count_npy(out + "/mels") < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  kill(pid, signal);
  return wait_for(pid);
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

class PreprocessCommand : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (std::system("command -v espeak-ng >/dev/null") != 0) return;
    fs::remove_all(kTmp);
    fs::create_directories(kTmp);
    std::string command = std::string(TTS_SOURCE_DIR) + "/scripts/make_corpus.sh " + kCorpus + " " +
                          std::to_string(kClips) + " >/dev/null";
    ASSERT_EQ(std::system(command.c_str()), 0);
  }
  void SetUp() override {
    if (!fs::exists(kCorpus + "/metadata.csv")) GTEST_SKIP() << "espeak-ng is not installed";
  }
};

}  // namespace

TEST_F(PreprocessCommand, UsageErrorsExitWith2) {
  EXPECT_EQ(
      run_cli({"preprocess", "--config", kConfig, "--output", kTmp + "/x"}, kTmp + "/usage.log"),
      2);
  EXPECT_EQ(run_cli({"preprocess", "--config", kConfig, "--input", kCorpus, "--output", kTmp + "/x",
                     "--set", "text.cleaners=[no_such_cleaner]"},
                    kTmp + "/usage.log"),
            2);
  EXPECT_NE(tts::read_file(kTmp + "/usage.log").find("no_such_cleaner"), std::string::npos);
}

TEST_F(PreprocessCommand, NothingKeptExitsWith1AndSaysWhy) {
  std::string corpus = kTmp + "/no_wavs";
  fs::create_directories(corpus);
  std::ofstream(corpus + "/metadata.csv") << "A|One.|One.\nB|Two.|Two.\n";
  std::string log = kTmp + "/nothing.log";
  EXPECT_EQ(
      run_cli({"preprocess", "--config", kConfig, "--input", corpus, "--output", kTmp + "/nothing"},
              log),
      1);
  std::string output = tts::read_file(log);
  EXPECT_NE(output.find("none of the 2 inputs was kept"), std::string::npos) << output;
  EXPECT_EQ(lines_of(kTmp + "/nothing/errors.tsv").size(), 3u);
}

TEST_F(PreprocessCommand, AKilledRunLeavesNoPartialArraysAndTheRerunFinishes) {
  std::string out = kTmp + "/killed";
  EXPECT_EQ(interrupt_run(out, SIGKILL), 128 + SIGKILL);
  EXPECT_FALSE(fs::exists(out + "/features.yaml")) << "the run finished before it was killed";
  int before = count_npy(out + "/mels");
  EXPECT_LT(before, kClips);
  for (const auto& entry : fs::directory_iterator(out + "/mels")) {
    if (entry.path().extension() == ".npy") {
      EXPECT_NO_THROW(tts::formats::read_npy(entry.path().string())) << entry.path();
    }
  }
  std::string log = out + ".rerun.log";
  ASSERT_EQ(run_cli(preprocess_args(out, 2), log), 0) << tts::read_file(log);
  EXPECT_EQ(lines_of(out + "/metadata.tsv").size(), static_cast<size_t>(kClips + 1));
  EXPECT_TRUE(fs::exists(out + "/features.yaml"));
  EXPECT_NE(tts::read_file(log).find("reused from an earlier run"), std::string::npos);
  for (const auto& entry : fs::directory_iterator(out + "/mels")) {
    EXPECT_EQ(entry.path().extension(), ".npy") << "left over: " << entry.path();
  }
}

TEST_F(PreprocessCommand, CtrlCStopsWithExitCode130AndTheRerunMatchesAnUninterruptedRun) {
  std::string out = kTmp + "/interrupted";
  EXPECT_EQ(interrupt_run(out, SIGINT), 130);
  EXPECT_NE(tts::read_file(out + ".log").find("rerun the same command"), std::string::npos);
  ASSERT_EQ(run_cli(preprocess_args(out, 2), out + ".rerun.log"), 0);
  std::string clean = kTmp + "/uninterrupted";
  ASSERT_EQ(run_cli(preprocess_args(clean, 1), clean + ".log"), 0);
  for (const char* name : {"metadata.tsv", "train.tsv", "val.tsv", "errors.tsv"}) {
    EXPECT_EQ(tts::read_file(out + "/" + name), tts::read_file(clean + "/" + name)) << name;
  }
  for (const auto& entry : fs::directory_iterator(clean + "/mels")) {
    EXPECT_EQ(tts::read_file(entry.path().string()),
              tts::read_file(out + "/mels/" + entry.path().filename().string()))
        << entry.path();
  }
}
