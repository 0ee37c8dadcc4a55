#include "tts/dist/launcher.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/ranges.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <fstream>
#include <iterator>

#include "tts/core/error.h"
#include "tts/core/logging.h"
#include "tts/core/timer.h"

namespace tts::dist {
namespace {

volatile std::sig_atomic_t g_signals_received = 0;
volatile std::sig_atomic_t g_last_signal = 0;

void on_signal(int signal) {
  g_last_signal = signal;
  g_signals_received = g_signals_received + 1;
}

struct Worker {
  pid_t pid = -1;
  int rank = 0;
  int out_fd = -1;  // read ends of the worker's stdout and stderr
  int err_fd = -1;
  std::string out_partial, err_partial;
  bool running = true;
  bool killed_stopped = false;  // SIGKILLed while stopped (below)
  int status = 0;
};

// Whether `pid` is stopped (SIGSTOP, SIGTSTP, a debugger): such a worker handles no SIGTERM
// until continued, and cannot finish its step anyway.
bool is_stopped(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const size_t close = line.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos || close + 2 >= line.size()) return false;
  const char state = line[close + 2];
  return state == 'T' || state == 't';
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with code {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return fmt::format("was killed by signal {} ({})", sig, strsignal(sig));
  }
  return "stopped";
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

void write_all(int fd, const std::string& text) {
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
}

// Reads what is available on `fd` and copies complete lines to `out_fd` with the rank prefix.
// Returns false at end of file (the partial last line is then flushed too).
bool pump(int& fd, std::string& partial, int rank, int out_fd) {
  char buffer[65536];
  const ssize_t n = ::read(fd, buffer, sizeof(buffer));
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  const std::string prefix = fmt::format("[rank {}] ", rank);
  if (n <= 0) {
    if (!partial.empty()) write_all(out_fd, prefix + partial + "\n");
    partial.clear();
    ::close(fd);
    fd = -1;
    return false;
  }
  partial.append(buffer, static_cast<size_t>(n));
  std::string lines;
  size_t start = 0;
  for (size_t nl; (nl = partial.find('\n', start)) != std::string::npos; start = nl + 1) {
    lines += prefix;
    lines.append(partial, start, nl + 1 - start);
  }
  partial.erase(0, start);
  if (!lines.empty()) write_all(out_fd, lines);
  return true;
}

void spawn(Worker& worker, int nproc, const std::vector<std::string>& argv, const std::string& addr,
           int port, int threads) {
  int out_pipe[2], err_pipe[2];
  TTS_CHECK(::pipe(out_pipe) == 0 && ::pipe(err_pipe) == 0, "launcher: pipe() failed: {}",
            std::strerror(errno));
  const pid_t launcher_pid = ::getpid();
  const pid_t pid = ::fork();
  TTS_CHECK(pid >= 0, "launcher: fork() failed: {}", std::strerror(errno));
  if (pid == 0) {
    // Own process group: a Ctrl-C on the terminal reaches the launcher only, which forwards it
    // once. The workers die with the launcher even if it is killed.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != launcher_pid) ::_exit(1);
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::dup2(err_pipe[1], STDERR_FILENO);
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) ::close(fd);
    ::setenv("RANK", std::to_string(worker.rank).c_str(), 1);
    ::setenv("LOCAL_RANK", std::to_string(worker.rank).c_str(), 1);
    ::setenv("WORLD_SIZE", std::to_string(nproc).c_str(), 1);
    ::setenv("LOCAL_WORLD_SIZE", std::to_string(nproc).c_str(), 1);
    ::setenv("MASTER_ADDR", addr.c_str(), 1);
    ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
    ::setenv("OMP_NUM_THREADS", std::to_string(threads).c_str(), 0);
    // The launcher prefixes every line with the rank; the worker's logger need not repeat it.
    ::setenv("TTS_OUTPUT_RANK_PREFIXED", "1", 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    const std::string message =
        fmt::format("launcher: cannot run {}: {}\n", argv[0], std::strerror(errno));
    write_all(STDERR_FILENO, message);
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  worker.pid = pid;
  worker.out_fd = out_pipe[0];
  worker.err_fd = err_pipe[0];
}

void signal_all(std::vector<Worker>& workers, int signal) {
  for (auto& w : workers) {
    if (w.running) ::kill(w.pid, signal);
  }
}

}  // namespace

int pick_free_port(const std::string& addr) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  TTS_CHECK(fd >= 0, "launcher: socket() failed: {}", std::strerror(errno));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = 0;
  if (::inet_pton(AF_INET, addr.c_str(), &sa.sin_addr) != 1) sa.sin_addr.s_addr = INADDR_ANY;
  socklen_t len = sizeof(sa);
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) == 0;
  const int err = errno;
  ::close(fd);
  TTS_CHECK(ok, "launcher: cannot find a free port on {}: {}; set distributed.master_port", addr,
            std::strerror(err));
  return ntohs(sa.sin_port);
}

std::vector<std::string> worker_command_line(const std::vector<std::string>& options) {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (size_t start = 0; start < raw.size();) {
    const size_t end = raw.find('\0', start);
    args.push_back(raw.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  TTS_CHECK(!args.empty(), "launcher: cannot read this process's command line");
  char exe[4096];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) args[0] = std::string(exe, static_cast<size_t>(n));
  std::vector<std::string> out{args[0]};
  for (size_t i = 1; i < args.size(); ++i) {
    bool launcher_option = false;
    for (const auto& option : options) {
      if (args[i] == option) {
        ++i;  // and its value
        launcher_option = true;
      } else if (args[i].rfind(option + "=", 0) == 0) {
        launcher_option = true;
      }
      if (launcher_option) break;
    }
    if (!launcher_option) out.push_back(args[i]);
  }
  return out;
}

namespace {

// The launcher's watch over its running workers: their output passed on line by line, the
// launcher's signals forwarded, exits collected, and a failed job's other ranks stopped (and
// killed when they do not stop).
class Supervisor {
 public:
  Supervisor(std::vector<Worker>& workers, const config::DistributedOptions& options)
      : workers_(workers), options_(options), log_(log::get("launcher")) {}

  // Until every worker has exited and its pipes closed; returns the rank that failed first, or
  // -1 when all exited 0.
  int run() {
    for (;;) {
      pump_outputs();
      forward_signals();
      const bool any_running = reap();
      if (stopping_ && !killed_) stop_the_rest(any_running);
      bool pipes_open = false;
      for (auto& w : workers_) pipes_open = pipes_open || w.out_fd >= 0 || w.err_fd >= 0;
      if (!any_running && !pipes_open) break;
      if (!any_running && !all_exited_) {
        all_exited_ = true;
        since_all_exited_.reset();
      }
      // A worker's own children may hold its pipes open after it exits: stop waiting for them.
      if (all_exited_ && since_all_exited_.seconds() > 5.0) break;
    }
    for (auto& w : workers_) {
      for (int* fd : {&w.out_fd, &w.err_fd}) {
        if (*fd >= 0) ::close(*fd);
      }
    }
    return first_failed_;
  }

 private:
  // Waits up to 100 ms for output and passes on what came, each line prefixed with its rank.
  void pump_outputs() {
    std::vector<pollfd> fds;
    std::vector<std::pair<size_t, bool>> owners;  // worker index, is stderr
    for (size_t r = 0; r < workers_.size(); ++r) {
      if (workers_[r].out_fd >= 0) {
        fds.push_back({workers_[r].out_fd, POLLIN, 0});
        owners.emplace_back(r, false);
      }
      if (workers_[r].err_fd >= 0) {
        fds.push_back({workers_[r].err_fd, POLLIN, 0});
        owners.emplace_back(r, true);
      }
    }
    if (!fds.empty()) ::poll(fds.data(), fds.size(), 100);
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      Worker& w = workers_[owners[i].first];
      if (owners[i].second) {
        pump(w.err_fd, w.err_partial, w.rank, STDERR_FILENO);
      } else {
        pump(w.out_fd, w.out_partial, w.rank, STDOUT_FILENO);
      }
    }
  }

  // The launcher's first signal goes to every worker (finish the step and exit); a second kills.
  void forward_signals() {
    if (g_signals_received <= forwarded_) return;
    forwarded_ = g_signals_received;
    if (forwarded_ == 1) {
      log_->warn("received {}: asking every worker to finish its step and exit",
                 strsignal(g_last_signal));
      signal_all(workers_, g_last_signal);
    } else {
      log_->warn("second signal: killing the workers");
      signal_all(workers_, SIGKILL);
    }
  }

  // Collects the workers that exited; the first failure stops the others. Returns whether any
  // still runs.
  bool reap() {
    bool any_running = false;
    for (auto& w : workers_) {
      if (!w.running) continue;
      if (::waitpid(w.pid, &w.status, WNOHANG) != w.pid) {
        any_running = true;
        continue;
      }
      w.running = false;
      const bool failed = !(WIFEXITED(w.status) && WEXITSTATUS(w.status) == 0);
      if (!failed || first_failed_ >= 0) continue;
      first_failed_ = w.rank;
      if (!stopping_) {
        log_->error("rank {} {}; stopping the other ranks", w.rank, describe_status(w.status));
        stopping_ = true;
        since_stop_.reset();
        signal_all(workers_, SIGTERM);
      }
    }
    return any_running;
  }

  // After a failure: a stopped worker (the silent rank of a hung job, often) would hold the job
  // until the SIGKILL below, so it is killed at once (SIGKILL is the one signal a stopped process
  // obeys); ranks still running distributed.timeout_s after the failure are killed.
  void stop_the_rest(bool any_running) {
    for (auto& w : workers_) {
      if (w.running && !w.killed_stopped && is_stopped(w.pid)) {
        log_->error(
            "rank {} is stopped (SIGSTOP, a debugger, or a paused job) and cannot finish its "
            "step: killing it",
            w.rank);
        ::kill(w.pid, SIGKILL);
        w.killed_stopped = true;
      }
    }
    if (any_running && since_stop_.seconds() > options_.timeout_s) {
      log_->error("ranks still running {} s after the failure: killing them", options_.timeout_s);
      signal_all(workers_, SIGKILL);
      killed_ = true;
    }
  }

  std::vector<Worker>& workers_;
  const config::DistributedOptions& options_;
  std::shared_ptr<spdlog::logger> log_;
  int first_failed_ = -1;
  int forwarded_ = 0;
  Stopwatch since_stop_, since_all_exited_;
  bool stopping_ = false, killed_ = false, all_exited_ = false;
};

// Starts `nproc` workers and supervises them until all have exited (see launch_workers). Returns
// the rank that failed first, or -1 when all exited 0; `workers` keeps their statuses.
int run_workers(int nproc, const std::vector<std::string>& worker_argv, const std::string& addr,
                int port, const config::DistributedOptions& options, std::vector<Worker>& workers) {
  workers.assign(static_cast<size_t>(nproc), Worker{});
  for (int r = 0; r < nproc; ++r) {
    workers[r].rank = r;
    spawn(workers[r], nproc, worker_argv, addr, port, options.threads_per_rank);
  }
  return Supervisor(workers, options).run();
}

}  // namespace

int launch_workers(int nproc, const std::vector<std::string>& worker_argv,
                   const config::DistributedOptions& options, int max_restarts,
                   const std::string& logs_dir) {
  TTS_USAGE_CHECK(nproc >= 1, "--nproc-per-node {}: expected at least 1", nproc);
  TTS_USAGE_CHECK(max_restarts >= 0, "--max-restarts {}: expected 0 or more", max_restarts);
  TTS_CHECK(!worker_argv.empty(), "launcher: no worker command");
  auto log = log::get("launcher");
  const std::string addr = options.master_addr;

  g_signals_received = 0;
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  struct sigaction old_int {
  }, old_term{};
  ::sigaction(SIGINT, &action, &old_int);
  ::sigaction(SIGTERM, &action, &old_term);

  std::vector<Worker> workers;
  int first_failed = -1;
  for (int restart = 0;; ++restart) {
    // A fresh port for every attempt: the old store's port may linger in TIME_WAIT.
    const int port = options.master_port > 0 ? options.master_port : pick_free_port(addr);
    log->info("starting {} workers (rendezvous {}:{}): {}", nproc, addr, port,
              fmt::join(worker_argv, " "));
    first_failed = run_workers(nproc, worker_argv, addr, port, options, workers);
    // A stop the user asked for (SIGINT/SIGTERM to the launcher) is never undone by a restart.
    if (first_failed < 0 || g_signals_received > 0 || restart == max_restarts) break;
    log->warn(
        "rank {} {}: restarting all {} workers (restart {} of {}); with --resume auto they "
        "continue from the run's latest checkpoint",
        first_failed, describe_status(workers[static_cast<size_t>(first_failed)].status), nproc,
        restart + 1, max_restarts);
  }
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);

  if (first_failed < 0) {
    log->info("all {} workers finished", nproc);
    return 0;
  }
  const Worker& failed = workers[static_cast<size_t>(first_failed)];
  log->error(
      "rank {} {} (the first to fail; the others were stopped). Its output above, "
      "prefixed [rank {}], says why{}",
      first_failed, describe_status(failed.status), first_failed,
      logs_dir.empty() ? std::string()
                       : fmt::format("; its warnings and errors are also in {}/rank_{}.log",
                                     logs_dir, first_failed));
  return exit_code_of(failed.status);
}

}  // namespace tts::dist
