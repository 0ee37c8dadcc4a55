#include "heartbeat.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace tts::dist {
namespace {

double steady_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

GuardedStore::GuardedStore(compat::StorePtr store, const RankInfo& info, double limit_s,
                           DeadlineWatchdog& watchdog)
    : store_(std::move(store)), info_(info), limit_s_(limit_s), watchdog_(&watchdog) {}

int64_t GuardedStore::add(const std::string& key, int64_t value) const {
  auto armed = watchdog_->arm(
      limit_s_, [this, key](double elapsed_s) { return silent_host(key, elapsed_s); });
  return store_->add(key, value);
}

std::string GuardedStore::silent_host(const std::string& key, double elapsed_s) const {
  const std::string host =
      info_.rank == 0 ? "rank 0 (this rank) hosts the store, and its store thread" : "rank 0";
  return fmt::format(
      "the store call add('{}') to rank 0's TCPStore at {}:{} got no answer in {:.1f} s "
      "(distributed.timeout_s = {} s): {} is silent. A store answers within milliseconds "
      "while its process runs, so rank 0 is stopped (SIGSTOP, a paused VM or container), wedged "
      "(a hung driver) or unreachable. Ending this rank with exit code 1 so that the launcher or "
      "torchrun stops the job; check rank 0's process and host, then rerun with --resume auto "
      "to continue from the last checkpoint",
      key, info_.master_addr, info_.master_port, elapsed_s, limit_s_, host);
}

Heartbeat::Heartbeat(const RankInfo& info, double timeout_s, DeadlineWatchdog& watchdog)
    : info_(info),
      interval_s_(std::clamp(timeout_s / 10.0, 0.05, 1.0)),
      watch_after_s_(timeout_s / 2),
      peer_beats_(static_cast<size_t>(info.world_size), -1),
      peer_changed_s_(static_cast<size_t>(info.world_size), steady_s()) {
  store_ = std::make_unique<GuardedStore>(
      compat::make_tcp_store(info.master_addr, info.master_port, false, 0, timeout_s), info,
      timeout_s, watchdog);
  thread_ = std::thread([this] { run(); });
}

Heartbeat::~Heartbeat() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Heartbeat::run() {
  int64_t published = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    lock.unlock();
    try {
      const int64_t started = collectives_.load();
      store_->add(collectives_key(info_.rank), started - published);
      published = started;
      store_->add(beat_key(info_.rank), 1);
      if (late()) read_peers();
    } catch (const std::exception&) {
      // The store's host (rank 0) is gone; the failing collective will report it.
      return;
    }
    lock.lock();
    wake_.wait_for(lock, std::chrono::duration<double>(interval_s_), [this] { return stop_; });
  }
}

int64_t Heartbeat::wait_began() {
  std::lock_guard<std::mutex> lock(peers_mutex_);
  waits_.emplace(next_wait_, steady_s());
  return next_wait_++;
}

void Heartbeat::wait_ended(int64_t id) {
  std::lock_guard<std::mutex> lock(peers_mutex_);
  waits_.erase(id);
}

bool Heartbeat::late() {
  std::lock_guard<std::mutex> lock(peers_mutex_);
  const double now = steady_s();
  for (const auto& [id, began_s] : waits_) {
    if (now - began_s > watch_after_s_) return true;
  }
  return false;
}

void Heartbeat::read_peers() {
  for (int r = 0; r < info_.world_size; ++r) {
    if (r == info_.rank) continue;
    const int64_t beat = store_->add(beat_key(r), 0);
    std::lock_guard<std::mutex> lock(peers_mutex_);
    if (beat != peer_beats_[r]) {
      peer_beats_[r] = beat;
      peer_changed_s_[r] = steady_s();
    }
  }
}

std::vector<std::string> Heartbeat::silent_peers(double stale_s) {
  std::lock_guard<std::mutex> lock(peers_mutex_);
  std::vector<std::string> silent;
  const double now = steady_s();
  for (int r = 0; r < info_.world_size; ++r) {
    if (r == info_.rank || now - peer_changed_s_[r] <= stale_s) continue;
    silent.push_back(
        fmt::format("rank {} (no heartbeat for {:.1f} s)", r, now - peer_changed_s_[r]));
  }
  return silent;
}

}  // namespace tts::dist
