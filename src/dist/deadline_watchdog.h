// Deadlines for the calls c10d cannot cancel. A TCPStore call has no timeout of its own against a
// host that stops answering (SIGSTOP, a paused VM, a driver that wedged the process): the
// connection stays open and the reply never comes. A collective is bounded by the backend's own
// timeout, but nothing outside c10d guarantees that. Each such call runs armed: past its deadline
// a thread of this process logs why, naming the silent rank, and ends the process with exit code
// 1 so that the launcher (or torchrun) stops the job; --resume auto then continues from the last
// checkpoint. There is nothing to save: the step in flight cannot finish without its peers.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace tts::dist {

class DeadlineWatchdog {
 public:
  // Why a call overran, composed on the watchdog's thread once its deadline passed.
  using Explain = std::function<std::string(double elapsed_s)>;

  // `who` prefixes the message ("rank 1 of 2 on host").
  explicit DeadlineWatchdog(std::string who);
  ~DeadlineWatchdog();
  DeadlineWatchdog(const DeadlineWatchdog&) = delete;
  DeadlineWatchdog& operator=(const DeadlineWatchdog&) = delete;

  // A call in flight: disarmed when destroyed.
  class Armed {
   public:
    Armed(DeadlineWatchdog* watchdog, int64_t id) : watchdog_(watchdog), id_(id) {}
    ~Armed() {
      if (watchdog_ != nullptr) watchdog_->disarm(id_);
    }
    Armed(Armed&& other) noexcept : watchdog_(other.watchdog_), id_(other.id_) {
      other.watchdog_ = nullptr;
    }
    Armed(const Armed&) = delete;
    Armed& operator=(const Armed&) = delete;
    Armed& operator=(Armed&&) = delete;

   private:
    DeadlineWatchdog* watchdog_;
    int64_t id_;
  };

  // Until the returned object is destroyed, the call must end within `limit_s`; otherwise the
  // process logs "WHO: explain(elapsed)" and exits with code 1.
  [[nodiscard]] Armed arm(double limit_s, Explain explain);

 private:
  struct Entry {
    double deadline_s;  // on the watchdog's clock
    double armed_at_s;
    Explain explain;
  };
  void disarm(int64_t id);
  void watch();
  double now_s() const;

  std::string who_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::map<int64_t, Entry> armed_;
  int64_t next_id_ = 0;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace tts::dist
