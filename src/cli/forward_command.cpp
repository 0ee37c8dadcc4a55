// tts-train forward: a checkpoint's network on named arrays, written as named arrays, so that a
// port can be checked against its reference from the command line. The checkpoint's family says
// the names and layouts (models/roles.h: ForwardRole).
#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "tts/cli/command.h"
#include "tts/cli/outputs.h"
#include "tts/core/error.h"
#include "tts/core/logging.h"
#include "tts/formats/npy.h"
#include "tts/models/registry.h"

namespace tts::cli {
namespace {

struct ForwardArgs {
  std::string checkpoint;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
};

std::string names_of(const std::vector<models::ForwardArray>& arrays) {
  std::vector<std::string> names;
  for (const auto& array : arrays) {
    names.push_back(
        fmt::format("{}{} ({})", array.name, array.required ? "" : " (optional)", array.layout));
  }
  return fmt::format("{}", fmt::join(names, "; "));
}

// NAME=PATH pairs of `option`, each NAME one of `allowed`, none twice.
std::map<std::string, std::string> named_paths(const std::vector<std::string>& assignments,
                                               const std::string& option,
                                               const std::vector<models::ForwardArray>& allowed,
                                               config::ModelKind kind) {
  std::map<std::string, std::string> paths;
  for (const std::string& assignment : assignments) {
    const size_t equals = assignment.find('=');
    TTS_USAGE_CHECK(equals != std::string::npos && equals > 0 && equals + 1 < assignment.size(),
                    "{} '{}': expected NAME=FILE.npy", option, assignment);
    const std::string name = assignment.substr(0, equals);
    bool known = false;
    for (const auto& array : allowed) known = known || array.name == name;
    TTS_USAGE_CHECK(known, "{} {}: a model.kind {} checkpoint has no such array; its {}s: {}",
                    option, name, kind, option.substr(2), names_of(allowed));
    TTS_USAGE_CHECK(paths.emplace(name, assignment.substr(equals + 1)).second, "{} {} given twice",
                    option, name);
  }
  return paths;
}

torch::Tensor read_array(const std::string& path) {
  formats::NpyArray array = formats::read_npy(path);
  return torch::from_blob(array.data.data(), array.shape, torch::kFloat32).clone();
}

Runner setup_forward(CLI::App& app) {
  auto args = std::make_shared<ForwardArgs>();
  app.add_option("--checkpoint", args->checkpoint,
                 "checkpoint file, RUN/checkpoints/latest or run directory")
      ->required();
  app.add_option("--input", args->inputs,
                 "NAME=FILE.npy, one per input the family takes (an unknown NAME lists them)")
      ->required();
  app.add_option("--output", args->outputs,
                 "NAME=FILE.npy, one per output to write (float32), any of the family's; "
                 "the folders must exist, no two outputs one file, none an input")
      ->required();
  std::vector<std::string> families;
  for (config::ModelKind kind : models::kinds()) {
    const models::ForwardRole& role = models::family(kind).forward;
    if (!role.run) continue;
    families.push_back(fmt::format("model.kind {}: inputs {}; outputs {}.", kind,
                                   names_of(role.inputs), names_of(role.outputs)));
  }
  app.footer(fmt::format("Arrays each family takes and gives:\n  {}", fmt::join(families, "\n  ")));
  return [args]() {
    models::TrainedCheckpoint trained = models::read_trained(args->checkpoint);
    const config::ModelKind kind = trained.config.model.kind;
    const models::ForwardRole& role = models::family(kind).forward;
    TTS_USAGE_CHECK(static_cast<bool>(role.run), "{}: model.kind {} has no forward", trained.source,
                    kind);
    const std::map<std::string, std::string> input_paths =
        named_paths(args->inputs, "--input", role.inputs, kind);
    const std::map<std::string, std::string> output_paths =
        named_paths(args->outputs, "--output", role.outputs, kind);
    OutputPlan plan;
    for (const auto& [name, path] : output_paths) {
      const std::string what = fmt::format("--output {}={}", name, path);
      require_extension(path, what, {".npy"});
      plan.add(path, what);
    }
    for (const auto& [name, path] : input_paths) {
      plan.add_input(path, fmt::format("--input {}={}", name, path));
    }
    plan.check();
    std::map<std::string, torch::Tensor> inputs;
    for (const auto& array : role.inputs) {
      auto found = input_paths.find(array.name);
      TTS_USAGE_CHECK(found != input_paths.end() || !array.required,
                      "forward: a model.kind {} checkpoint needs --input {}=FILE.npy ({})", kind,
                      array.name, array.layout);
      if (found != input_paths.end()) inputs[array.name] = read_array(found->second);
    }
    std::map<std::string, torch::Tensor> outputs = role.run(trained, inputs);
    auto log = log::get("forward");
    for (const auto& [name, path] : output_paths) {
      torch::Tensor tensor = outputs.at(name).to(torch::kCPU, torch::kFloat32).contiguous();
      formats::write_npy(path, tensor.data_ptr<float>(), tensor.sizes().vec());
      log->info("{}: {} [{}]", path, name, fmt::join(tensor.sizes(), ", "));
    }
    return 0;
  };
}

}  // namespace

TTS_REGISTER_COMMAND("forward",
                     "a checkpoint's network on named .npy arrays, its named outputs as .npy "
                     "(checking a port against its reference)",
                     47, setup_forward);

}  // namespace tts::cli
