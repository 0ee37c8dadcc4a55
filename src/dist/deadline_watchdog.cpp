#include "deadline_watchdog.h"

#include <chrono>
#include <cstdlib>

#include "tts/core/logging.h"

namespace tts::dist {

DeadlineWatchdog::DeadlineWatchdog(std::string who) : who_(std::move(who)) {
  thread_ = std::thread([this] { watch(); });
}

DeadlineWatchdog::~DeadlineWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

double DeadlineWatchdog::now_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

DeadlineWatchdog::Armed DeadlineWatchdog::arm(double limit_s, Explain explain) {
  std::lock_guard<std::mutex> lock(mutex_);
  const double now = now_s();
  const int64_t id = next_id_++;
  armed_.emplace(id, Entry{now + limit_s, now, std::move(explain)});
  return Armed(this, id);
}

void DeadlineWatchdog::disarm(int64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  armed_.erase(id);
}

void DeadlineWatchdog::watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!done_) {
    const double now = now_s();
    for (const auto& [id, entry] : armed_) {
      if (now <= entry.deadline_s) continue;
      // The call's own thread is stuck inside c10d: explain and end the process from here.
      const std::string why = entry.explain(now - entry.armed_at_s);
      log::get("dist")->error("{}: {}", who_, why);
      std::_Exit(1);
    }
    wake_.wait_for(lock, std::chrono::milliseconds(50));
  }
}

}  // namespace tts::dist
