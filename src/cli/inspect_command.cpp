// tts-train inspect CKPT [--json]: what a checkpoint holds, for comparing runs.
#include <torch/torch.h>

#include <cmath>
#include <iostream>
#include <map>
#include <set>

#include "tts/checkpoint/checkpoint.h"
#include "tts/cli/command.h"
#include "tts/config/config.h"
#include "tts/core/printable.h"
#include "tts/models/registry.h"

namespace tts::cli {
namespace {

// A JSON string of `text` (a file's bytes: quotes, backslashes and control characters escaped).
std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

Runner setup_inspect(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  app.add_option("checkpoint", *path,
                 "a checkpoint file, RUN/checkpoints/latest, or a run or checkpoints directory")
      ->required();
  app.add_flag("--json", *json, "print one JSON object instead of text");
  return [path, json]() {
    checkpoint::Checkpoint checkpoint = checkpoint::load_checkpoint(*path);
    config::Config config = models::config_of(checkpoint, *path);
    std::set<std::string> parameters(checkpoint.parameter_names.begin(),
                                     checkpoint.parameter_names.end());
    int64_t parameter_count = 0;
    for (const auto& [name, tensor] : checkpoint.tensors) {
      if (parameters.count(name)) parameter_count += tensor.numel();
    }
    auto l2 = [](const torch::Tensor& t) { return t.to(torch::kDouble).norm().item<double>(); };
    // PyTorch's name of a dtype (torch.float32, ...) without the prefix.
    auto dtype = [](const torch::Tensor& t) -> std::string {
      static const std::map<at::ScalarType, std::string> names{
          {torch::kFloat, "float32"}, {torch::kDouble, "float64"}, {torch::kBFloat16, "bfloat16"},
          {torch::kHalf, "float16"},  {torch::kInt64, "int64"},    {torch::kInt32, "int32"},
          {torch::kUInt8, "uint8"},   {torch::kBool, "bool"}};
      auto found = names.find(t.scalar_type());
      return found != names.end() ? found->second : std::string(c10::toString(t.scalar_type()));
    };
    const auto& s = checkpoint.state;
    const models::CheckpointSummary summary =
        models::family(config.model.kind).summarize_checkpoint(checkpoint, config);
    if (*json) {
      std::string metrics;
      for (const auto& [name, value] : checkpoint.metrics) {
        metrics += fmt::format("{}{}: {}", metrics.empty() ? "" : ", ", json_string(name),
                               std::isfinite(value) ? fmt::format("{}", value) : "null");
      }
      std::cout << fmt::format(
          "{{\"step\": {}, \"epoch\": {}, \"world_size\": {}, \"batch_size\": {}, "
          "\"model\": {}, ",
          s.step, s.epoch, s.world_size, s.phase.batch_size,
          json_string(std::string(choice_name(config.model.kind))));
      for (const auto& [name, value] : summary.json_fields) {
        std::cout << fmt::format("{}: {}, ", json_string(name), value);
      }
      std::vector<std::string> symbols;
      for (const std::string& symbol : checkpoint.symbols) symbols.push_back(json_string(symbol));
      std::cout << fmt::format(
          "\"symbols\": [{}], \"params\": {}, \"metrics\": {{{}}}, \"tensors\": [",
          fmt::join(symbols, ", "), parameter_count, metrics);
      bool first = true;
      for (const auto& [name, tensor] : checkpoint.tensors) {
        std::cout << fmt::format(
            "{}{{\"name\": {}, \"shape\": [{}], \"dtype\": \"{}\", \"l2\": {}}}", first ? "" : ", ",
            json_string(name), fmt::join(tensor.sizes(), ", "), dtype(tensor), l2(tensor));
        first = false;
      }
      std::cout << "]}\n";
      return 0;
    }
    std::cout << fmt::format(
        "checkpoint   {}\nstep         {} (epoch {})\ntrained on   {} rank(s) x batch {} = "
        "global batch {}\nparameters   {}\naudio        {} Hz, n_fft {}, hop {}, win {}, {} mels "
        "({}-{} Hz), {} compression{}\n",
        *path, s.step, s.epoch, s.world_size, s.phase.batch_size, s.world_size * s.phase.batch_size,
        parameter_count, config.audio.sample_rate, config.audio.n_fft, config.audio.hop_length,
        config.audio.win_length, config.audio.n_mels, config.audio.fmin, config.audio.fmax,
        config.audio.compression, config.audio.linear ? ", linear targets" : "");
    for (const auto& [label, text] : summary.lines) {
      std::cout << fmt::format("{:<12} {}\n", label, text);
    }
    if (!checkpoint.symbols.empty()) {  // the ids' meaning, as the model was trained
      std::vector<std::string> shown;
      for (const std::string& symbol : checkpoint.symbols)
        shown.push_back("'" + printable(symbol) + "'");
      std::cout << fmt::format("symbols      {}: {}\n", shown.size(), fmt::join(shown, " "));
    }
    std::cout << "\n";
    if (!checkpoint.metrics.empty()) {
      // The last validation before the checkpoint: is the run learning to align?
      std::cout << "last validation\n";
      for (const auto& [name, value] : checkpoint.metrics) {
        std::cout << fmt::format("  {:<30} {:.4g}\n", printable(name), value);
      }
      std::cout << "\n";
    }
    std::cout << fmt::format("{:<60} {:<16} {}\n", "tensor", "shape", "l2");
    for (const auto& [name, tensor] : checkpoint.tensors) {
      std::cout << fmt::format("{:<60} {:<16} {:.6g}\n", printable(name),
                               fmt::join(tensor.sizes(), "x"), l2(tensor));
    }
    return 0;
  };
}

}  // namespace

TTS_REGISTER_COMMAND("inspect", "show a checkpoint: step, world size, config, every tensor's L2",
                     60, setup_inspect);

}  // namespace tts::cli
