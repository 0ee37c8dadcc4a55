// tts-train inspect CKPT [--json]: what a checkpoint holds, for comparing runs.
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <set>

#include "tts/checkpoint/checkpoint.h"
#include "tts/cli/command.h"
#include "tts/config/config.h"
#include "tts/core/json.h"
#include "tts/core/printable.h"
#include "tts/models/registry.h"

namespace tts::cli {
namespace {

// Rows of text columns, each column as wide as its widest cell (the last one unpadded), `gap`
// spaces apart.
std::string aligned(const std::vector<std::vector<std::string>>& rows, const std::string& indent,
                    size_t gap = 2) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (size_t k = 0; k < row.size(); ++k) widths[k] = std::max(widths[k], row[k].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line = indent;
    for (size_t k = 0; k < row.size(); ++k) {
      line += row[k];
      if (k + 1 < row.size()) line += std::string(widths[k] - row[k].size() + gap, ' ');
    }
    out += line + "\n";
  }
  return out;
}

// Each section of `fields` in order, as a JSON object's members: ("audio", {"\"n_fft\": 1024",
// ...}).
std::vector<std::pair<std::string, std::vector<std::string>>> json_sections(
    const std::vector<config::FieldValue>& fields) {
  std::vector<std::pair<std::string, std::vector<std::string>>> sections;
  for (const config::FieldValue& field : fields) {
    const size_t dot = field.key.find('.');
    const std::string section = field.key.substr(0, dot);
    if (sections.empty() || sections.back().first != section) sections.push_back({section, {}});
    sections.back().second.push_back(
        fmt::format("{}: {}", json_string(field.key.substr(dot + 1)), field.json));
  }
  return sections;
}

Runner setup_inspect(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  app.add_option("checkpoint", *path,
                 "a checkpoint file, RUN/checkpoints/latest, or a run or checkpoints directory")
      ->required();
  app.add_flag("--json", *json,
               "print one JSON object instead of text: step, epoch, world_size, batch_size, "
               "model, the family's fields, audio (the audio section), config (every section), "
               "symbols, params, metrics, tensors");
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
    const std::vector<config::FieldValue> fields = config::field_values(config);
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
      const auto sections = json_sections(fields);
      std::vector<std::string> config_json;
      for (const auto& [section, members] : sections) {
        config_json.push_back(
            fmt::format("{}: {{{}}}", json_string(section), fmt::join(members, ", ")));
      }
      const auto audio = std::find_if(sections.begin(), sections.end(),
                                      [](const auto& section) { return section.first == "audio"; });
      std::cout << fmt::format("\"audio\": {{{}}}, \"config\": {{{}}}, ",
                               fmt::join(audio->second, ", "), fmt::join(config_json, ", "));
      std::vector<std::string> symbols;
      for (const std::string& symbol : checkpoint.symbols) symbols.push_back(json_string(symbol));
      if (!checkpoint.speakers.empty()) {  // a model of several speakers: its rows by name
        std::vector<std::string> speakers;
        for (const std::string& name : checkpoint.speakers) speakers.push_back(json_string(name));
        std::cout << fmt::format("\"speakers\": [{}], ", fmt::join(speakers, ", "));
      }
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
    std::vector<std::vector<std::string>> header{
        {"checkpoint", printable(*path)},
        {"step", fmt::format("{} (epoch {})", s.step, s.epoch)},
        {"trained on", fmt::format("{} rank(s) x batch {} = global batch {}", s.world_size,
                                   s.phase.batch_size, s.world_size * s.phase.batch_size)},
        {"parameters", std::to_string(parameter_count)},
        {"audio", fmt::format("{} Hz, n_fft {}, hop {}, win {}, {} mels ({}-{} Hz), {} "
                              "compression{}",
                              config.audio.sample_rate, config.audio.n_fft, config.audio.hop_length,
                              config.audio.win_length, config.audio.n_mels, config.audio.fmin,
                              config.audio.fmax, config.audio.compression,
                              config.audio.linear ? ", linear targets" : "")}};
    for (const auto& [label, text] : summary.lines) header.push_back({label, text});
    if (!checkpoint.symbols.empty()) {  // the ids' meaning, as the model was trained
      std::vector<std::string> shown;
      for (const std::string& symbol : checkpoint.symbols) {
        shown.push_back("'" + printable(symbol) + "'");
      }
      header.push_back({"symbols", fmt::format("{}: {}", shown.size(), fmt::join(shown, " "))});
    }
    if (!checkpoint.speakers.empty()) {  // synthesize --speaker takes these names
      std::vector<std::string> shown;
      for (const std::string& name : checkpoint.speakers) shown.push_back(printable(name));
      header.push_back({"speakers", fmt::format("{}: {}", shown.size(), fmt::join(shown, ", "))});
    }
    std::cout << aligned(header, "", 3) << "\n";
    if (!checkpoint.metrics.empty()) {
      // The last validation before the checkpoint: is the run learning to align?
      std::vector<std::vector<std::string>> rows;
      for (const auto& [name, value] : checkpoint.metrics) {
        rows.push_back({printable(name), fmt::format("{:.4g}", value)});
      }
      std::cout << "last validation\n" << aligned(rows, "  ") << "\n";
    }
    std::vector<std::vector<std::string>> config_rows;
    for (const config::FieldValue& field : fields) {
      config_rows.push_back({field.key, printable(field.text)});
    }
    std::cout << "config (as trained)\n" << aligned(config_rows, "  ") << "\n";
    std::vector<std::vector<std::string>> tensors{{"tensor", "shape", "l2"}};
    for (const auto& [name, tensor] : checkpoint.tensors) {
      tensors.push_back({printable(name), fmt::format("{}", fmt::join(tensor.sizes(), "x")),
                         fmt::format("{:.6g}", l2(tensor))});
    }
    std::cout << aligned(tensors, "");
    return 0;
  };
}

}  // namespace

TTS_REGISTER_COMMAND("inspect",
                     "show a checkpoint: step, world size, audio settings, config, every tensor's "
                     "L2",
                     60, setup_inspect);

}  // namespace tts::cli
