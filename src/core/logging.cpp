#include "tts/core/logging.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/core/printable.h"

namespace tts::log {
namespace {

// Logs `message` through `log`, its text made printable first (printable.h): a line quoting a
// file's bytes reaches the terminal and the log files without their control characters.
template <class Log>
void log_printable(const spdlog::details::log_msg& message, Log&& log) {
  const std::string_view payload(message.payload.data(), message.payload.size());
  const std::string escaped = printable(payload, /*keep_newlines=*/true);
  if (escaped == payload) {
    log(message);
    return;
  }
  spdlog::details::log_msg copy = message;
  copy.payload = spdlog::string_view_t(escaped.data(), escaped.size());
  log(copy);
}

// spdlog's colour stderr sink behind log_printable.
class PrintableStderrSink : public spdlog::sinks::sink {
 public:
  void log(const spdlog::details::log_msg& message) override {
    log_printable(message, [&](const spdlog::details::log_msg& m) { inner_.log(m); });
  }
  void flush() override { inner_.flush(); }
  void set_pattern(const std::string& pattern) override { inner_.set_pattern(pattern); }
  void set_formatter(std::unique_ptr<spdlog::formatter> formatter) override {
    inner_.set_formatter(std::move(formatter));
  }

 private:
  spdlog::sinks::stderr_color_sink_mt inner_;
};

struct State {
  std::mutex mutex;
  std::vector<spdlog::sink_ptr> sinks;
  spdlog::level::level_enum level = spdlog::level::info;
  std::string pattern = "[%H:%M:%S.%e] [%n] %^%l%$: %v";
  std::vector<std::shared_ptr<spdlog::logger>> loggers;

  State() { sinks.push_back(std::make_shared<PrintableStderrSink>()); }
};

// Appends formatted lines to a file opened by open_for_append (never through a symlink, never a
// FIFO); spdlog's own file sink opens its path with fopen, which follows links.
class AppendSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit AppendSink(const std::string& path) : path_(path), fd_(open_for_append(path)) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& message) override {
    log_printable(message, [&](const spdlog::details::log_msg& m) {
      spdlog::memory_buf_t line;
      formatter_->format(m, line);
      write_all(fd_, std::string_view(line.data(), line.size()), path_);
    });
  }
  void flush_() override {}  // every line is written by write(2) at once

 private:
  std::string path_;
  FileDescriptor fd_;
};

State& state() {
  static State instance;
  return instance;
}

void apply(State& s, spdlog::logger& logger) {
  logger.sinks() = s.sinks;
  logger.set_level(s.level);
  logger.set_pattern(s.pattern);
  logger.flush_on(spdlog::level::warn);
}

}  // namespace

void setup(const LogSetup& setup) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.level = setup.level;
  if (setup.rank > 0 && s.level < spdlog::level::warn) s.level = spdlog::level::warn;
  // Under tts-train's own launcher every line already starts with "[rank N] ".
  const bool prefixed_by_launcher = std::getenv("TTS_OUTPUT_RANK_PREFIXED") != nullptr;
  s.pattern = setup.world_size > 1 && !prefixed_by_launcher
                  ? fmt::format("[%H:%M:%S.%e] [rank {}] [%n] %^%l%$: %v", setup.rank)
                  : "[%H:%M:%S.%e] [%n] %^%l%$: %v";
  for (auto& logger : s.loggers) apply(s, *logger);
}

void add_file(const std::string& path, spdlog::level::level_enum level) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto sink = std::make_shared<AppendSink>(path);
  sink->set_level(level);
  s.sinks.push_back(sink);
  for (auto& logger : s.loggers) apply(s, *logger);
}

std::shared_ptr<spdlog::logger> get(const std::string& tag) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  for (auto& logger : s.loggers) {
    if (logger->name() == tag) return logger;
  }
  auto logger = std::make_shared<spdlog::logger>(tag);
  apply(s, *logger);
  s.loggers.push_back(logger);
  return logger;
}

}  // namespace tts::log
