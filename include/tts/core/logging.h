// Rank-aware logging through spdlog. Every subsystem logs through its own tagged logger
// (tts::log::get("data") prints "[data]"); all loggers share the same sinks: stderr always, plus
// a file once a run directory exists. Rank 0 logs at the configured level; other ranks log only
// warnings and errors, each line carrying its rank. stdout is never used by logging: it is
// reserved for a command's own output (YAML, JSON).
#pragma once

#include <spdlog/spdlog.h>

#include <memory>
#include <string>

namespace tts::log {

// The level is the config's choice (config::LogLevel, whose names are listed once, beside it);
// the CLI resolves it once (cli::apply_log_level: --log-level over logging.level over info).
struct LogSetup {
  spdlog::level::level_enum level = spdlog::level::info;
  int rank = 0;        // this process's rank; ranks > 0 only warn and error
  int world_size = 1;  // ranks are shown in each line when > 1
};

// Applies level and rank to every logger, existing and future.
void setup(const LogSetup& setup);

// Also writes every logger's output at `min_level` or above to `path` (appending, opened by
// open_for_append of fs.h: a symlink or anything but a regular file is refused). Used for
// RUN/train.log (rank 0, everything) and RUN/logs/rank_K.log (every rank, warnings and errors).
void add_file(const std::string& path, spdlog::level::level_enum min_level = spdlog::level::trace);

// The logger tagged `tag` (created on first use with the shared sinks).
std::shared_ptr<spdlog::logger> get(const std::string& tag);

}  // namespace tts::log
