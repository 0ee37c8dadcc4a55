// Subcommand registry of the `tts-train` executable. Each file in src/cli/ defines one
// subcommand and registers it with TTS_REGISTER_COMMAND; main() (apps/tts-train.cpp) adds every
// registered subcommand to the CLI11 app, parses, and runs the chosen one. Only commands that
// exist are registered, so `--help` lists exactly what works.
#pragma once

#include <spdlog/common.h>

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tts/config/config.h"

namespace tts::cli {

// Runs a parsed subcommand; returns the process exit code.
using Runner = std::function<int()>;

struct Command {
  std::string name;
  std::string description;
  int order;  // position in --help
  // Adds the subcommand's options to `app` and returns what runs it once parsed.
  std::function<Runner(CLI::App& app)> setup;
};

// Registers a command; returns true so it can initialize a static.
bool register_command(Command command);
// Registered commands, in `order`.
std::vector<Command> registered_commands();

// --config FILE and repeated --set section.key=value, shared by every command that takes a
// config.
struct ConfigArgs {
  std::string path;
  std::vector<std::string> overrides;

  // Adds the options; with `required`, --config must be given.
  void add_to(CLI::App& app, bool required);
  // Loads and validates (throws UsageError), then applies the config's log level
  // (apply_log_level).
  config::Config load() const;
};

// The log level, resolved in one place by one rule: --log-level over the config's
// logging.level over info. main() records the flag once (nullopt when not given); commands apply
// the level when they know their config and their rank (ranks > 0 log warnings and errors only).
void set_log_level_flag(std::optional<config::LogLevel> flag);
void apply_log_level(const config::Config* config, int rank = 0, int world_size = 1);
// The level that rule gives, for a layer below that sets up its logging itself (train::launch).
spdlog::level::level_enum resolved_log_level(const config::Config* config);

}  // namespace tts::cli

#define TTS_CLI_CONCAT_INNER(a, b) a##b
#define TTS_CLI_CONCAT(a, b) TTS_CLI_CONCAT_INNER(a, b)
#define TTS_REGISTER_COMMAND(...)                                       \
  static const bool TTS_CLI_CONCAT(tts_command_registered_, __LINE__) = \
      ::tts::cli::register_command(::tts::cli::Command{__VA_ARGS__})
