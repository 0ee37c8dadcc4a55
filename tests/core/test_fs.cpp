// The file primitives every reader and writer of run folders and stores goes through (fs.h): no
// symlink followed out of a folder, no FIFO waited on, no planted temporary opened.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "../support/error_of.h"
#include "../support/scratch.h"
#include "tts/core/error.h"
#include "tts/core/fs.h"

namespace fs = std::filesystem;

namespace {

using tts::test::error_of;

std::string contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// A folder holding `outside.txt` (the file an attacker wants changed) and `run/`.
struct Folders {
  std::string root = tts::test::fresh_dir("fs");
  std::string run = root + "/run";
  std::string outside = root + "/outside.txt";
  Folders() {
    fs::create_directories(run);
    write(outside, "precious\n");
  }
};

}  // namespace

TEST(AtomicWrite, WritesAndReplacesRegularFiles) {
  Folders f;
  const std::string path = f.run + "/report.html";
  tts::write_file_atomic(path, "first");
  tts::write_file_atomic(path, "second");
  EXPECT_EQ(contents(path), "second");
  EXPECT_EQ(tts::read_file(path), "second");
  int files = 0;
  for (const auto& entry : fs::directory_iterator(f.run)) files += entry.exists() ? 1 : 0;
  EXPECT_EQ(files, 1) << "no temporary is left behind";
}

TEST(AtomicWrite, RefusesASymlinkedDestination) {
  Folders f;
  const std::string path = f.run + "/config.yaml";
  fs::create_symlink(f.outside, path);
  const std::string message = error_of([&] { tts::write_file_atomic(path, "x"); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("symbolic link"), std::string::npos) << message;
  EXPECT_EQ(contents(f.outside), "precious\n");
  EXPECT_TRUE(fs::is_symlink(path));
}

TEST(AtomicWrite, RefusesADirectoryOrFifoDestination) {
  Folders f;
  fs::create_directories(f.run + "/plots");
  EXPECT_NE(error_of([&] { tts::write_file_atomic(f.run + "/plots", "x"); }).find("a directory"),
            std::string::npos);
  ASSERT_EQ(::mkfifo((f.run + "/pipe").c_str(), 0644), 0);
  EXPECT_NE(error_of([&] { tts::write_file_atomic(f.run + "/pipe", "x"); }).find("FIFO"),
            std::string::npos);
}

TEST(AtomicWrite, NeverOpensAPlantedTemporary) {
  Folders f;
  const std::string path = f.run + "/step_00000001.pt";
  // The names the old writer used, and a few more: links that all point outside.
  for (const std::string& suffix :
       {std::string(".tmp"), ".tmp." + std::to_string(getpid()), std::string(".tmp.0")}) {
    fs::create_symlink(f.outside, path + suffix);
  }
  tts::AtomicFile file(path);
  EXPECT_EQ(file.temporary_path().rfind(path + ".tmp.", 0), 0u);
  EXPECT_EQ(file.temporary_path().size(), path.size() + 5 + 16) << "16 random hex digits";
  tts::write_all(file.fd(), "weights", file.temporary_path());
  file.commit();
  EXPECT_EQ(contents(path), "weights");
  EXPECT_EQ(contents(f.outside), "precious\n");
}

TEST(AtomicWrite, RemovesItsTemporaryWhenNotCommitted) {
  Folders f;
  std::string temporary;
  {
    tts::AtomicFile file(f.run + "/x.npy");
    temporary = file.temporary_path();
    EXPECT_TRUE(fs::exists(temporary));
  }
  EXPECT_FALSE(fs::exists(temporary));
  EXPECT_FALSE(fs::exists(f.run + "/x.npy"));
}

TEST(AppendOpen, AppendsToARegularFileAndCreatesIt) {
  Folders f;
  const std::string path = f.run + "/metrics.jsonl";
  {
    tts::FileDescriptor fd = tts::open_for_append(path);
    tts::write_all(fd, "one\n", path);
  }
  {
    tts::FileDescriptor fd = tts::open_for_append(path);
    tts::write_all(fd, "two\n", path);
  }
  EXPECT_EQ(contents(path), "one\ntwo\n");
  tts::FileDescriptor fd = tts::open_for_append(path, true);
  tts::write_all(fd, "three\n", path);
  EXPECT_EQ(contents(path), "three\n");
}

TEST(AppendOpen, RefusesSymlinksFifosAndDirectories) {
  Folders f;
  const std::string log = f.run + "/train.log";
  fs::create_symlink(f.outside, log);
  const std::string message = error_of([&] { tts::open_for_append(log); });
  EXPECT_NE(message.find(log), std::string::npos) << message;
  EXPECT_NE(message.find("symbolic link"), std::string::npos) << message;
  EXPECT_EQ(contents(f.outside), "precious\n");

  const std::string dangling = f.run + "/rank_0.log";
  fs::create_symlink(f.root + "/created_outside.log", dangling);
  EXPECT_NE(error_of([&] { tts::open_for_append(dangling); }), "");
  EXPECT_FALSE(fs::exists(f.root + "/created_outside.log"));

  const std::string pipe = f.run + "/events";
  ASSERT_EQ(::mkfifo(pipe.c_str(), 0644), 0);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NE(error_of([&] { tts::open_for_append(pipe); }).find("FIFO"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_NE(error_of([&] { tts::open_for_append(f.run); }).find("a directory"), std::string::npos);
}

TEST(RegularRead, RefusesFifosWithoutBlockingAndLinksUnlessFollowed) {
  Folders f;
  const std::string pipe = f.run + "/x.npy";
  ASSERT_EQ(::mkfifo(pipe.c_str(), 0644), 0);
  const auto start = std::chrono::steady_clock::now();
  const std::string message = error_of([&] { tts::read_file(pipe); });
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_NE(message.find(pipe), std::string::npos) << message;
  EXPECT_NE(message.find("FIFO"), std::string::npos) << message;

  const std::string link = f.run + "/y.npy";
  fs::create_symlink(f.outside, link);
  EXPECT_NE(error_of([&] { tts::read_file(link); }).find("symbolic link"), std::string::npos);
  EXPECT_EQ(tts::read_file(link, tts::Symlinks::kFollow), "precious\n");
  EXPECT_NE(error_of([&] { tts::read_file(f.run); }).find("a directory"), std::string::npos);
  EXPECT_NE(error_of([&] { tts::read_file(f.run + "/missing"); }).find("no such file"),
            std::string::npos);
  EXPECT_NE(error_of([&] { tts::read_file("/dev/null", tts::Symlinks::kFollow); }).find("device"),
            std::string::npos);
}

TEST(RegularRead, ReadsRanges) {
  Folders f;
  const std::string path = f.run + "/data";
  write(path, "0123456789");
  tts::FileDescriptor fd = tts::open_regular_file_for_read(path);
  EXPECT_EQ(tts::file_size(fd, path), 10);
  EXPECT_EQ(tts::read_at(fd, path, 3, 4), "3456");
  EXPECT_EQ(tts::read_at(fd, path, 8, 5), "89") << "cut at the end of the file";
}

TEST(Folders, CreatesFoldersAndRefusesLinkedOnes) {
  Folders f;
  tts::create_folder(f.run + "/checkpoints/deeper");
  EXPECT_TRUE(fs::is_directory(f.run + "/checkpoints/deeper"));
  tts::create_folder(f.run + "/checkpoints");  // exists: fine
  fs::create_directories(f.root + "/elsewhere");
  fs::create_directory_symlink(f.root + "/elsewhere", f.run + "/logs");
  const std::string message = error_of([&] { tts::create_folder(f.run + "/logs"); });
  EXPECT_NE(message.find(f.run + "/logs"), std::string::npos) << message;
  EXPECT_NE(message.find("symbolic link"), std::string::npos) << message;
}

TEST(Symlinks, ReplacesAPointerOrAFileButNotAFolder) {
  Folders f;
  const std::string latest = f.run + "/latest";
  tts::replace_symlink(latest, "step_1.pt");
  tts::replace_symlink(latest, "step_2.pt");
  EXPECT_EQ(fs::read_symlink(latest).string(), "step_2.pt");
  fs::create_symlink(f.outside, f.run + "/other");
  tts::replace_symlink(f.run + "/other", "step_2.pt");  // the link is replaced, not followed
  EXPECT_EQ(contents(f.outside), "precious\n");
  write(f.run + "/plain", "data");  // a copied run's latest, dereferenced
  tts::replace_symlink(f.run + "/plain", "step_2.pt");
  EXPECT_EQ(fs::read_symlink(f.run + "/plain").string(), "step_2.pt");
  fs::create_directories(f.run + "/folder");
  EXPECT_NE(error_of([&] { tts::replace_symlink(f.run + "/folder", "step_2.pt"); }).find("folder"),
            std::string::npos);
  EXPECT_TRUE(fs::is_directory(f.run + "/folder"));
}
