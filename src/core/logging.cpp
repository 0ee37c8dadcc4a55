#include "tts/core/logging.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include "tts/core/error.h"

namespace tts::log {
namespace {

struct State {
  std::mutex mutex;
  std::vector<spdlog::sink_ptr> sinks;
  spdlog::level::level_enum level = spdlog::level::info;
  std::string pattern = "[%H:%M:%S.%e] [%n] %^%l%$: %v";
  std::vector<std::shared_ptr<spdlog::logger>> loggers;

  State() { sinks.push_back(std::make_shared<spdlog::sinks::stderr_color_sink_mt>()); }
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
  auto sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(path);
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
