#include "rendezvous_watchdog.h"

#include <fmt/format.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include "tts/core/logging.h"
#include "tts/core/timer.h"

namespace tts::dist {
namespace {

std::atomic<int> g_signal{0};
struct sigaction g_old_int {};
struct sigaction g_old_term {};

extern "C" void on_rendezvous_signal(int signal) { g_signal = signal; }

}  // namespace

RendezvousWatchdog::RendezvousWatchdog(const RankInfo& info, double timeout_s)
    : info_(info), timeout_s_(timeout_s) {
  g_signal = 0;
  struct sigaction action {};
  action.sa_handler = on_rendezvous_signal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, &g_old_int);
  ::sigaction(SIGTERM, &action, &g_old_term);
  thread_ = std::thread([this] { watch(); });
}

RendezvousWatchdog::~RendezvousWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  wake_.notify_all();
  thread_.join();
  ::sigaction(SIGINT, &g_old_int, nullptr);
  ::sigaction(SIGTERM, &g_old_term, nullptr);
  // A signal in the last instant is not lost: the handler in place now (the training loop's
  // graceful stop) gets it.
  if (const int signal = g_signal.exchange(0)) std::raise(signal);
}

void RendezvousWatchdog::stage(const std::string& what) {
  std::lock_guard<std::mutex> lock(mutex_);
  stage_ = what;
}

void RendezvousWatchdog::watch() {
  const double limit_s = timeout_s_ + 1.0;
  Stopwatch clock;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!done_) {
    if (const int signal = g_signal.load()) {
      log::get("dist")->error(
          "{}: received {} while {}: stopping before training started (nothing to save)",
          info_.describe(), strsignal(signal), stage_);
      std::_Exit(128 + signal);
    }
    if (clock.seconds() > limit_s) {
      log::get("dist")->error(
          "{}: the rendezvous did not complete within distributed.timeout_s = {} s (still {}). "
          "Check that all {} ranks were started with the same MASTER_ADDR/MASTER_PORT, that rank "
          "0's host and port are reachable from every host, and that GLOO_SOCKET_IFNAME (if set) "
          "names an interface the ranks share; raise distributed.timeout_s if ranks start far "
          "apart",
          info_.describe(), timeout_s_, stage_, info_.world_size);
      std::_Exit(1);
    }
    wake_.wait_for(lock, std::chrono::milliseconds(50));
  }
}

}  // namespace tts::dist
