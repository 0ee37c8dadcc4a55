#include "tts/cli/command.h"

#include <algorithm>

#include "tts/core/logging.h"

namespace tts::cli {
namespace {

std::optional<config::LogLevel>& log_level_flag() {
  static std::optional<config::LogLevel> flag;
  return flag;
}

spdlog::level::level_enum spdlog_level(config::LogLevel level) {
  switch (level) {
    case config::LogLevel::kTrace:
      return spdlog::level::trace;
    case config::LogLevel::kDebug:
      return spdlog::level::debug;
    case config::LogLevel::kInfo:
      return spdlog::level::info;
    case config::LogLevel::kWarn:
      return spdlog::level::warn;
    case config::LogLevel::kError:
      return spdlog::level::err;
    case config::LogLevel::kOff:
      return spdlog::level::off;
  }
  return spdlog::level::info;
}

std::vector<Command>& commands() {
  static std::vector<Command> instance;
  return instance;
}

}  // namespace

bool register_command(Command command) {
  commands().push_back(std::move(command));
  return true;
}

std::vector<Command> registered_commands() {
  std::vector<Command> sorted = commands();
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Command& a, const Command& b) { return a.order < b.order; });
  return sorted;
}

void ConfigArgs::add_to(CLI::App& app, bool required) {
  auto* option = app.add_option("-c,--config", path, "YAML config file (see configs/)");
  if (required) option->required();
  app.add_option("--set", overrides,
                 "override a config value: --set section.key=value (repeatable), e.g. "
                 "--set train.batch_size=32")
      ->take_all()
      ->allow_extra_args(false);
}

config::Config ConfigArgs::load() const {
  config::Config config = config::load_config(path, overrides);
  apply_log_level(&config);
  return config;
}

void set_log_level_flag(std::optional<config::LogLevel> flag) { log_level_flag() = flag; }

spdlog::level::level_enum resolved_log_level(const config::Config* config) {
  const config::LogLevel level = log_level_flag()    ? *log_level_flag()
                                 : config != nullptr ? config->logging.level
                                                     : config::LogLevel::kInfo;
  return spdlog_level(level);
}

void apply_log_level(const config::Config* config, int rank, int world_size) {
  log::setup({resolved_log_level(config), rank, world_size});
}

}  // namespace tts::cli
