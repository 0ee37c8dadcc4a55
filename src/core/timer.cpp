#include "tts/core/timer.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace tts {

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  if (seconds < 60) return fmt::format("{:.1f}s", seconds);
  auto total = static_cast<int64_t>(seconds);
  if (total < 3600) return fmt::format("{}m{:02d}s", total / 60, total % 60);
  return fmt::format("{}h{:02d}m", total / 3600, (total % 3600) / 60);
}

Progress::Progress(std::string what, int64_t total, std::shared_ptr<spdlog::logger> logger,
                   double log_every_s)
    : what_(std::move(what)),
      total_(total),
      logger_(std::move(logger)),
      log_every_s_(log_every_s),
      tty_(isatty(fileno(stderr)) != 0) {}

Progress::~Progress() {
  if (!finished_ && tty_ && done_ > 0) std::fputc('\n', stderr);
}

void Progress::advance(int64_t n) {
  done_ += n;
  double now = watch_.seconds();
  double interval = tty_ ? 0.2 : log_every_s_;
  if (now - last_report_s_ >= interval) {
    last_report_s_ = now;
    report(false);
  }
}

void Progress::finish() {
  if (finished_) return;
  report(true);
  finished_ = true;
}

void Progress::report(bool final) {
  double elapsed = watch_.seconds();
  double rate = elapsed > 0 ? static_cast<double>(done_) / elapsed : 0.0;
  double eta = rate > 0 ? static_cast<double>(total_ - done_) / rate : NAN;
  double fraction = total_ > 0 ? static_cast<double>(done_) / static_cast<double>(total_) : 1.0;
  if (tty_) {
    constexpr int kWidth = 30;
    int filled = static_cast<int>(fraction * kWidth);
    std::string bar(static_cast<size_t>(filled), '#');
    bar.resize(kWidth, '.');
    std::fprintf(stderr, "\r[%s] %lld/%lld %s %.1f/s ETA %s   ", bar.c_str(),
                 static_cast<long long>(done_), static_cast<long long>(total_), what_.c_str(), rate,
                 format_duration(eta).c_str());
    if (final) std::fputc('\n', stderr);
    std::fflush(stderr);
  } else if (logger_) {
    logger_->info("{}/{} {} ({:.0f}%), {:.1f}/s, {} {}", done_, total_, what_, 100.0 * fraction,
                  rate, final ? "took" : "ETA", format_duration(final ? elapsed : eta));
  }
}

}  // namespace tts
