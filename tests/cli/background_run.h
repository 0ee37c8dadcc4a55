// Test helper: a command run in the background (its output to a file) that never outlives the
// test, and the pids of a launcher's workers, found by their RANK variable.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace tts::test {

// The pids of `parent`'s children.
inline std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> found;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // pid (comm) state ppid ...: comm may contain spaces, so parse after the last ')'.
    std::istringstream rest(line.substr(line.rfind(')') + 1));
    std::string state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent) found.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return found;
}

// The pids of `parent`'s children whose environment has RANK=rank.
inline std::vector<pid_t> children_with_rank(pid_t parent, int rank) {
  std::vector<pid_t> found;
  for (pid_t child : children_of(parent)) {
    std::ifstream environ("/proc/" + std::to_string(child) + "/environ");
    const std::string wanted = "RANK=" + std::to_string(rank);
    for (std::string variable; std::getline(environ, variable, '\0');) {
      if (variable == wanted) {
        found.push_back(child);
        break;
      }
    }
  }
  return found;
}

// Kills `pid` and all its descendants (children first found, then killed, parents first so that
// none restarts them).
inline void kill_tree(pid_t pid) {
  const std::vector<pid_t> children = children_of(pid);
  kill(pid, SIGKILL);
  for (pid_t child : children) kill_tree(child);
}

// `exec sh -c COMMAND > LOG 2>&1`; killed with all its descendants when the object goes out of
// scope unless wait() reaped it.
class BackgroundRun {
 public:
  BackgroundRun(const std::string& command, const std::string& log) {
    pid_ = fork();
    if (pid_ == 0) {
      const std::string line = "exec " + command + " > " + log + " 2>&1";
      execl("/bin/sh", "sh", "-c", line.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    EXPECT_GT(pid_, 0);
  }
  ~BackgroundRun() {
    if (reaped_ || pid_ <= 0) return;
    kill_tree(pid_);
    waitpid(pid_, nullptr, 0);
  }
  BackgroundRun(const BackgroundRun&) = delete;
  BackgroundRun& operator=(const BackgroundRun&) = delete;

  pid_t pid() const { return pid_; }
  // Waits up to `limit_s` for the command to end; returns its exit code (128 + signal), or -1
  // (after killing it) when it ran longer.
  int wait(double limit_s) {
    const auto start = std::chrono::steady_clock::now();
    int status = 0;
    while (waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >
          limit_s) {
        return -1;  // the destructor kills it
      }
      usleep(50000);
    }
    reaped_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
};

// Waits up to `limit_s` for `path` to exist.
inline bool wait_for_file(const std::string& path, double limit_s) {
  const auto start = std::chrono::steady_clock::now();
  while (!std::filesystem::exists(path)) {
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > limit_s) {
      return false;
    }
    usleep(100000);
  }
  return true;
}

}  // namespace tts::test
