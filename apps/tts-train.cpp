// tts-train: train Tacotron-2 text-to-speech models on one or many GPUs, or on CPUs.
// main() only dispatches to the subcommands in src/cli/ and turns errors into exit codes:
// 0 success, 1 runtime failure, 2 usage or config error.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <map>

#include "tts/cli/command.h"
#include "tts/core/allocator.h"
#include "tts/core/error.h"
#include "tts/core/logging.h"

int main(int argc, char** argv) {
  const std::string heap_policy = tts::keep_freed_memory();
  CLI::App app{
      "tts-train: data-parallel training of text-to-speech models and their vocoders, from "
      "speech corpora to speech"};
  app.set_version_flag("--version", std::string("tts-train ") + TTS_VERSION);
  app.require_subcommand(1);
  app.fallthrough();
  std::string log_level;  // empty: the config's logging.level, else info
  app.add_option("--log-level", log_level,
                 fmt::format("{} (default: the config's logging.level, else info)",
                             fmt::join(tts::config::choice_names<tts::config::LogLevel>(), ", ")));

  std::map<CLI::App*, tts::cli::Runner> runners;
  for (const auto& command : tts::cli::registered_commands()) {
    CLI::App* sub = app.add_subcommand(command.name, command.description);
    runners[sub] = command.setup(*sub);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  try {
    tts::cli::set_log_level_flag(
        log_level.empty() ? std::nullopt
                          : std::optional(tts::config::require_choice<tts::config::LogLevel>(
                                log_level, "--log-level")));
    tts::cli::apply_log_level(nullptr);
    tts::log::get("tts-train")->debug("{}", heap_policy);
    for (CLI::App* sub : app.get_subcommands()) return runners.at(sub)();
    return 2;
  } catch (const tts::Error& e) {
    tts::log::get("tts-train")->error("{}", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    tts::log::get("tts-train")->error("unexpected failure: {}", e.what());
    return 1;
  }
}
