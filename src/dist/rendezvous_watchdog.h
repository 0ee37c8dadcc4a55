// Bounds the rendezvous (TCPStore, process-group creation) by distributed.timeout_s and lets
// SIGINT/SIGTERM end it. c10d's calls cannot be cancelled, and some of them wait for several of
// their own timeouts in a row (retrying a connect, then waiting on the store), so the rendezvous
// is watched from a thread: past the deadline, or when a signal arrives, that thread logs why
// and ends the process. There is nothing to save before the first step.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "tts/dist/rank_info.h"

namespace tts::dist {

class RendezvousWatchdog {
 public:
  // Starts watching; until destroyed, SIGINT and SIGTERM end the process with 128 + signal, and
  // so does the deadline (timeout_s from now, plus a second for c10d's own error to come first)
  // with exit code 1. The previous signal handlers are restored on destruction.
  RendezvousWatchdog(const RankInfo& info, double timeout_s);
  ~RendezvousWatchdog();
  RendezvousWatchdog(const RendezvousWatchdog&) = delete;
  RendezvousWatchdog& operator=(const RendezvousWatchdog&) = delete;

  // What the rendezvous is doing now ("connecting to the store at ..."), for the message.
  void stage(const std::string& what);

 private:
  void watch();

  RankInfo info_;
  double timeout_s_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::string stage_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace tts::dist
