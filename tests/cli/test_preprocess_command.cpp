// Runs the real `tts-train preprocess`: exit codes, interruption by SIGKILL and SIGINT, resume,
// and corpora encoded as FLAC and Ogg Vorbis.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sndfile.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <utility>
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

namespace {

// The first `clips` utterances of kCorpus rewritten into `out` by libsndfile's writer as
// `format`, named wavs/ID`extension` (the extensions a corpus may use; libsndfile reads a file by
// its content). 16-bit samples are copied as they are, so a FLAC of PCM_16 holds exactly the
// WAV's samples.
std::vector<std::string> transcode_corpus(const std::string& out, int clips, int format,
                                          const std::string& extension) {
  fs::create_directories(out + "/wavs");
  std::vector<std::string> lines = lines_of(kCorpus + "/metadata.csv");
  lines.resize(static_cast<size_t>(clips));
  std::ofstream metadata(out + "/metadata.csv");
  std::vector<std::string> ids;
  for (const auto& line : lines) {
    const std::string id = line.substr(0, line.find('|'));
    metadata << line << "\n";
    SF_INFO info{};
    SNDFILE* in = sf_open((kCorpus + "/wavs/" + id + ".wav").c_str(), SFM_READ, &info);
    EXPECT_NE(in, nullptr) << id;
    if (in == nullptr) return ids;
    std::vector<short> samples(static_cast<size_t>(info.frames * info.channels));
    sf_read_short(in, samples.data(), static_cast<sf_count_t>(samples.size()));
    sf_close(in);
    info.format = format;
    SNDFILE* file = sf_open((out + "/wavs/" + id + extension).c_str(), SFM_WRITE, &info);
    EXPECT_NE(file, nullptr) << sf_strerror(nullptr);
    if (file == nullptr) return ids;
    sf_write_short(file, samples.data(), static_cast<sf_count_t>(samples.size()));
    sf_close(file);
    ids.push_back(id);
  }
  return ids;
}

}  // namespace

// libsndfile reports FLAC with a PCM subtype: the uncompressed-size check must go by container,
// or every FLAC is refused as "truncated". The same clips as WAV, FLAC and Ogg Vorbis give the
// same mels: FLAC exactly (lossless 16-bit), Vorbis closely.
TEST_F(PreprocessCommand, FlacAndVorbisCorporaGiveTheMelsOfTheirWavs) {
  constexpr int kCompared = 3;
  std::vector<std::string> ids;
  for (const auto& [name, format] :
       std::vector<std::pair<std::string, int>>{{"wav", SF_FORMAT_WAV | SF_FORMAT_PCM_16},
                                                {"flac", SF_FORMAT_FLAC | SF_FORMAT_PCM_16},
                                                {"ogg", SF_FORMAT_OGG | SF_FORMAT_VORBIS}}) {
    const std::string corpus = kTmp + "/corpus_" + name;
    ids = transcode_corpus(corpus, kCompared, format, "." + name);
    ASSERT_EQ(ids.size(), static_cast<size_t>(kCompared));
    const int code = run_cli(
        {"preprocess", "--config", kConfig, "--input", corpus, "--output", kTmp + "/store_" + name,
         "--workers", "1", "--set", "audio.trim=false", "--set", "data.val_size=1"},
        kTmp + "/" + name + ".log");
    ASSERT_EQ(code, 0) << tts::read_file(kTmp + "/" + name + ".log");
  }
  for (const auto& id : ids) {
    auto mel = [&](const std::string& name) {
      return tts::formats::read_npy(kTmp + "/store_" + name + "/mels/" + id + ".npy");
    };
    const tts::formats::NpyArray wav = mel("wav");
    const tts::formats::NpyArray flac = mel("flac");
    const tts::formats::NpyArray ogg = mel("ogg");
    ASSERT_GT(wav.data.size(), 0u);
    EXPECT_EQ(flac.shape, wav.shape) << id;
    EXPECT_EQ(flac.data, wav.data) << id << ": FLAC of 16-bit PCM is lossless";
    ASSERT_EQ(ogg.shape, wav.shape) << id;
    // In the linear domain: ln(max(S, 1e-5)) magnifies the quiet bins Vorbis drops.
    double error = 0;
    double energy = 0;
    for (size_t i = 0; i < wav.data.size(); ++i) {
      const double a = std::exp(static_cast<double>(wav.data[i]));
      const double b = std::exp(static_cast<double>(ogg.data[i]));
      error += (a - b) * (a - b);
      energy += a * a;
    }
    // libsndfile's default Vorbis quality gives about 3.5 % on these clips.
    EXPECT_LT(std::sqrt(error / energy), 0.1) << id << ": Vorbis is lossy, its mel stays close";
  }
}

// Two audio files for one id (ID.wav and ID.flac) cannot be told apart: that utterance is skipped
// naming both, the others are kept.
TEST_F(PreprocessCommand, TwoAudioFilesForOneIdAreSkippedNamingBoth) {
  const std::string corpus = kTmp + "/corpus_both";
  std::vector<std::string> ids =
      transcode_corpus(corpus, 3, SF_FORMAT_WAV | SF_FORMAT_PCM_16, ".wav");
  ASSERT_EQ(ids.size(), 3u);
  fs::copy_file(corpus + "/wavs/" + ids[1] + ".wav", corpus + "/wavs/" + ids[1] + ".flac");
  const std::string store = kTmp + "/store_both";
  const int code = run_cli({"preprocess", "--config", kConfig, "--input", corpus, "--output", store,
                            "--workers", "1", "--set", "audio.trim=false", "--set",
                            "data.val_size=1", "--set", "data.max_skip_fraction=0.5"},
                           kTmp + "/both.log");
  ASSERT_EQ(code, 0) << tts::read_file(kTmp + "/both.log");
  const std::string errors = tts::read_file(store + "/errors.tsv");
  EXPECT_NE(
      errors.find(ids[1] + "\tambiguous audio: 2 files for utterance " + ids[1] + " ('" + corpus +
                  "/wavs/" + ids[1] + ".wav', '" + corpus + "/wavs/" + ids[1] + ".flac')"),
      std::string::npos)
      << errors;
  EXPECT_TRUE(fs::exists(store + "/mels/" + ids[0] + ".npy"));
  EXPECT_FALSE(fs::exists(store + "/mels/" + ids[1] + ".npy"));
}

// Corpora of several espeak-ng voices in each multi-speaker layout (scripts/make_corpus.sh),
// through the real CLI: the same speakers and utterances whatever the layout, every speaker in
// validation, and `data check` printing each speaker's counts.
TEST_F(PreprocessCommand, SpeakersOfEveryLayoutReachTheStoreAndItsSplit) {
  std::map<std::string, std::string> tables;
  for (const std::string layout : {"vctk", "libritts", "csv"}) {
    const std::string corpus = kTmp + "/speakers_" + layout;
    const std::string make = "LAYOUT=" + layout +
                             " VOICES='en-us+f3 en-gb+m2 en+m3' MAX_CHARS=50 " + TTS_SOURCE_DIR +
                             "/scripts/make_corpus.sh " + corpus + " 4 >/dev/null";
    ASSERT_EQ(std::system(make.c_str()), 0) << layout;
    const std::string store = kTmp + "/speakers_store_" + layout;
    const std::string log = kTmp + "/speakers_" + layout + ".log";
    ASSERT_EQ(run_cli({"preprocess", "--config", kConfig, "--corpus", layout, "--input", corpus,
                       "--output", store, "--workers", "2", "--set", "data.val_size=3"},
                      log),
              0)
        << tts::read_file(log);
    EXPECT_NE(tts::read_file(log).find("kept 12 of 12 utterances of 3 speakers"), std::string::npos)
        << tts::read_file(log);
    EXPECT_NE(tts::read_file(log).find("3 of 3 speakers have less than data.min_speaker_minutes"),
              std::string::npos);
    EXPECT_EQ(tts::read_file(store + "/speakers.tsv")
                  .rfind("name\tid\tutterances\tminutes\nen-gb_m2\t0\t4\t0.", 0),
              0u)
        << tts::read_file(store + "/speakers.tsv");
    std::set<std::string> heard;
    for (const std::string& row : lines_of(store + "/val.tsv")) {
      const size_t start = row.find("\ten");  // the speaker column, after the waveform's "-"
      if (start != std::string::npos)
        heard.insert(row.substr(start + 1, row.find('\t', start + 1) - start - 1));
    }
    EXPECT_EQ(heard, (std::set<std::string>{"en-gb_m2", "en-us_f3", "en_m3"})) << layout;
    // The tables name the same speakers: only where the audio came from differs.
    std::string speakers;
    for (const std::string& line : lines_of(store + "/speakers.tsv")) {
      speakers += line.substr(0, line.rfind('\t')) + "\n";
    }
    tables[layout] = speakers;

    const std::string check_log = kTmp + "/speakers_check_" + layout + ".log";
    ASSERT_EQ(run_cli({"data", "check", "--config", kConfig, "--data", store}, check_log), 0)
        << tts::read_file(check_log);
    EXPECT_NE(tts::read_file(check_log).find(
                  "speaker en-us_f3: 4 utterances (3 for training, 1 for validation)"),
              std::string::npos)
        << tts::read_file(check_log);
  }
  EXPECT_EQ(tables["vctk"], tables["libritts"]);
  EXPECT_EQ(tables["vctk"], tables["csv"]);

  // A corpus of the wrong layout is a usage error naming the layout it has and the flag.
  const std::string log = kTmp + "/speakers_wrong.log";
  EXPECT_EQ(run_cli({"preprocess", "--config", kConfig, "--corpus", "vctk", "--input", kCorpus,
                     "--output", kTmp + "/speakers_wrong"},
                    log),
            2);
  EXPECT_NE(tts::read_file(log).find("has ljspeech's layout, but it is read as data.corpus: vctk: "
                                     "add --corpus ljspeech"),
            std::string::npos)
      << tts::read_file(log);
}
