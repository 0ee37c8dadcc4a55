// Wall-clock timing helpers: a stopwatch and a progress reporter (count, rate, ETA) that draws a
// bar on a terminal and writes periodic log lines otherwise.
#pragma once

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace tts {

class Stopwatch {
 public:
  Stopwatch() : start_(Clock::now()) {}
  void reset() { start_ = Clock::now(); }
  // Seconds since construction or the last reset().
  double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_;
};

// Reports progress of `total` items. Thread-compatible: call advance() from one thread.
class Progress {
 public:
  // `what` names the items ("clips"); `logger` receives the periodic lines when stderr is not a
  // terminal. `log_every_s` is the interval between those lines.
  Progress(std::string what, int64_t total, std::shared_ptr<spdlog::logger> logger,
           double log_every_s = 10.0);
  ~Progress();
  void advance(int64_t n = 1);
  // Draws the final state and ends the bar line.
  void finish();
  int64_t done() const { return done_; }

 private:
  void report(bool final);

  std::string what_;
  int64_t total_;
  int64_t done_ = 0;
  std::shared_ptr<spdlog::logger> logger_;
  double log_every_s_;
  double last_report_s_ = -1e9;
  bool tty_;
  bool finished_ = false;
  Stopwatch watch_;
};

// "1h02m", "3m05s", "12.3s".
std::string format_duration(double seconds);

}  // namespace tts
