// tts-train config: print the fully resolved config, or check a config file.
#include <iostream>

#include "tts/cli/command.h"
#include "tts/core/error.h"
#include "tts/core/logging.h"

namespace tts::cli {
namespace {

Runner setup_config(CLI::App& app) {
  auto args = std::make_shared<ConfigArgs>();
  auto check_path = std::make_shared<std::string>();
  args->add_to(app, false);
  app.add_option("--check", *check_path,
                 "validate this config file (with any --set) and exit 0 if valid, 2 if not (what "
                 "every command exits with for a config error)");
  app.footer(
      "Prints the resolved config as YAML on stdout: every section and key, defaults filled "
      "in, each with its meaning. The output loads back to the same config.");
  return [args, check_path]() {
    if (!check_path->empty()) {
      try {
        config::load_config(*check_path, args->overrides);
      } catch (const UsageError& e) {
        log::get("config")->error("{}", e.what());
        return 2;
      }
      log::get("config")->info("{}: valid", *check_path);
      return 0;
    }
    std::cout << config::dump_config(args->load()) << std::flush;
    return 0;
  };
}

}  // namespace

TTS_REGISTER_COMMAND("config", "print the resolved config as YAML, or --check a config file", 90,
                     setup_config);

}  // namespace tts::cli
