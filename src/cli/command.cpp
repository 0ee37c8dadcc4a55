#include "tts/cli/command.h"

#include <algorithm>

namespace tts::cli {
namespace {

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

config::Config ConfigArgs::load() const { return config::load_config(path, overrides); }

}  // namespace tts::cli
