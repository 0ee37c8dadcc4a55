// The liveness of the ranks, kept in the rendezvous TCPStore (rank 0 hosts it), and the store's
// calls made with a deadline. Each rank's background thread bumps "tts/heartbeat/<rank>" every
// interval and publishes how many collectives it has started. When a collective fails, the ranks
// whose heartbeat stopped are the lost ones; when none stopped (a timeout), the ranks that started
// the fewest collectives are the stuck ones (Communicator's diagnosis). While this rank waits on a
// collective, the thread also reads the others' heartbeats, so that a collective that overruns
// its deadline can name the rank that went silent.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "deadline_watchdog.h"
#include "tts/dist/c10d_compat.h"
#include "tts/dist/rank_info.h"

namespace tts::dist {

// A client of rank 0's store whose every call must end within `limit_s` (distributed.timeout_s):
// the store's thread in rank 0 answers within milliseconds whatever rank 0's training does, so a
// call that overruns means rank 0 is stopped, wedged or unreachable, and the watchdog ends this
// process with a message that says so.
class GuardedStore {
 public:
  GuardedStore(compat::StorePtr store, const RankInfo& info, double limit_s,
               DeadlineWatchdog& watchdog);
  int64_t add(const std::string& key, int64_t value) const;

 private:
  std::string silent_host(const std::string& key, double elapsed_s) const;

  compat::StorePtr store_;
  RankInfo info_;
  double limit_s_;
  DeadlineWatchdog* watchdog_;
};

class Heartbeat {
 public:
  // A store client of its own (the main thread's calls must not queue behind ours).
  Heartbeat(const RankInfo& info, double timeout_s, DeadlineWatchdog& watchdog);
  ~Heartbeat();
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

  double interval_s() const { return interval_s_; }
  void collective_started() { ++collectives_; }
  // A wait on a collective begins (returns its id) or ends. Once a wait has lasted half of
  // distributed.timeout_s, the others' heartbeats are read every interval until it ends: n calls
  // per rank and interval only while something is already late, not n^2 on the store always.
  int64_t wait_began();
  void wait_ended(int64_t id);
  // The other ranks whose heartbeat has not changed for more than `stale_s` while watched, and
  // for how long, as "rank 1 (no heartbeat for 12.0 s)"; empty when all beat.
  std::vector<std::string> silent_peers(double stale_s);

  static std::string beat_key(int rank) { return "tts/heartbeat/" + std::to_string(rank); }
  static std::string collectives_key(int rank) { return "tts/collectives/" + std::to_string(rank); }

 private:
  void run();
  bool late();  // a wait has lasted watch_after_s_
  void read_peers();

  RankInfo info_;
  double interval_s_;
  std::unique_ptr<GuardedStore> store_;
  std::atomic<int64_t> collectives_{0};
  double watch_after_s_;  // how long a wait lasts before the others' heartbeats are read
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  // Guarded by peers_mutex_: the waits in progress (id -> when it began, steady clock, s), each
  // rank's last heartbeat read, and when it last changed; -1 until read.
  std::mutex peers_mutex_;
  std::map<int64_t, double> waits_;
  int64_t next_wait_ = 0;
  std::vector<int64_t> peer_beats_;
  std::vector<double> peer_changed_s_;
  std::thread thread_;
};

}  // namespace tts::dist
