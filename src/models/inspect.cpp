#include "tts/models/inspect.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "tts/core/error.h"
#include "tts/core/json_writer.h"
#include "tts/core/printable.h"

namespace tts::models {
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

double l2(const torch::Tensor& t) { return t.to(torch::kDouble).norm().item<double>(); }

// PyTorch's name of a dtype (torch.float32, ...) without the prefix.
std::string dtype_name(const torch::Tensor& t) {
  static const std::map<at::ScalarType, std::string> names{
      {torch::kFloat, "float32"}, {torch::kDouble, "float64"}, {torch::kBFloat16, "bfloat16"},
      {torch::kHalf, "float16"},  {torch::kInt64, "int64"},    {torch::kInt32, "int32"},
      {torch::kUInt8, "uint8"},   {torch::kBool, "bool"}};
  auto found = names.find(t.scalar_type());
  return found != names.end() ? found->second : std::string(c10::toString(t.scalar_type()));
}

std::string quoted_list(const std::vector<std::string>& items) {
  std::vector<std::string> quoted;
  for (const std::string& item : items) quoted.push_back(json_string(item));
  return fmt::format("[{}]", fmt::join(quoted, ", "));
}

// The header's rows: what the checkpoint is, as text.
std::vector<std::vector<std::string>> header_rows(const CheckpointReport& report) {
  const checkpoint::TrainingState& s = report.checkpoint.state;
  const config::AudioOptions& audio = report.config.audio;
  std::vector<std::vector<std::string>> header{
      {"checkpoint",
       report.file == report.path
           ? printable(report.path)
           : fmt::format("{} (from {})", printable(report.file), printable(report.path))},
      {"step", fmt::format("{} (epoch {})", s.step, s.epoch)},
      {"trained on", fmt::format("{} rank(s) x batch {} = global batch {}", s.world_size,
                                 s.phase.batch_size, s.world_size * s.phase.batch_size)},
      {"parameters", std::to_string(report.parameter_count)},
      {"audio", fmt::format("{} Hz, n_fft {}, hop {}, win {}, {} mels ({}-{} Hz), {} "
                            "compression{}",
                            audio.sample_rate, audio.n_fft, audio.hop_length, audio.win_length,
                            audio.n_mels, audio.fmin, audio.fmax, audio.compression,
                            audio.linear ? ", linear targets" : "")}};
  for (const auto& [label, text] : report.summary.lines) header.push_back({label, text});
  if (!report.checkpoint.symbols.empty()) {  // the ids' meaning, as the model was trained
    std::vector<std::string> shown;
    for (const std::string& symbol : report.checkpoint.symbols) {
      shown.push_back("'" + printable(symbol) + "'");
    }
    header.push_back({"symbols", fmt::format("{}: {}", shown.size(), fmt::join(shown, " "))});
  }
  if (!report.checkpoint.speakers.empty()) {  // synthesize --speaker takes these names
    std::vector<std::string> shown;
    for (const std::string& name : report.checkpoint.speakers) shown.push_back(printable(name));
    header.push_back({"speakers", fmt::format("{}: {}", shown.size(), fmt::join(shown, ", "))});
  }
  return header;
}

}  // namespace

CheckpointReport inspect_checkpoint(const std::string& path) {
  CheckpointReport report;
  report.path = path;
  // Resolved once, and that file read: a save in between cannot make the two differ.
  const std::vector<std::string> files = checkpoint::checkpoint_files(path);
  TTS_CHECK(!files.empty(),
            "no checkpoint in '{}': expected step_N.pt files written by tts-train train", path);
  report.file = files.front();
  report.checkpoint = checkpoint::load_checkpoint(report.file);
  report.config = config_of(report.checkpoint, path);
  const std::set<std::string> parameters(report.checkpoint.parameter_names.begin(),
                                         report.checkpoint.parameter_names.end());
  for (const auto& [name, tensor] : report.checkpoint.tensors) {
    if (parameters.count(name)) report.parameter_count += tensor.numel();
  }
  report.summary =
      family(report.config.model.kind).summarize_checkpoint(report.checkpoint, report.config);
  report.fields = config::field_values(report.config);
  return report;
}

std::string report_text(const CheckpointReport& report) {
  const checkpoint::Checkpoint& checkpoint = report.checkpoint;
  std::string out = aligned(header_rows(report), "", 3) + "\n";
  if (!checkpoint.metrics.empty()) {
    // The last validation before the checkpoint: is the run learning to align?
    std::vector<std::vector<std::string>> rows;
    for (const auto& [name, value] : checkpoint.metrics) {
      rows.push_back({printable(name), fmt::format("{:.4g}", value)});
    }
    out += "last validation\n" + aligned(rows, "  ") + "\n";
  }
  std::vector<std::vector<std::string>> config_rows;
  for (const config::FieldValue& field : report.fields) {
    config_rows.push_back({field.key, printable(field.text)});
  }
  out += "config (as trained)\n" + aligned(config_rows, "  ") + "\n";
  std::vector<std::vector<std::string>> tensors{{"tensor", "shape", "l2"}};
  for (const auto& [name, tensor] : checkpoint.tensors) {
    tensors.push_back({printable(name), fmt::format("{}", fmt::join(tensor.sizes(), "x")),
                       fmt::format("{:.6g}", l2(tensor))});
  }
  return out + aligned(tensors, "");
}

std::string report_json(const CheckpointReport& report) {
  const checkpoint::Checkpoint& checkpoint = report.checkpoint;
  const checkpoint::TrainingState& s = checkpoint.state;
  std::string metrics;
  for (const auto& [name, value] : checkpoint.metrics) {
    metrics += fmt::format("{}{}: {}", metrics.empty() ? "" : ", ", json_string(name),
                           std::isfinite(value) ? fmt::format("{}", value) : "null");
  }
  std::string out = fmt::format(
      "{{\"file\": {}, \"step\": {}, \"epoch\": {}, \"world_size\": {}, \"batch_size\": {}, "
      "\"model\": {}, ",
      json_string(report.file), s.step, s.epoch, s.world_size, s.phase.batch_size,
      json_string(std::string(choice_name(report.config.model.kind))));
  for (const auto& [name, value] : report.summary.json_fields) {
    out += fmt::format("{}: {}, ", json_string(name), value);
  }
  const auto sections = json_sections(report.fields);
  std::vector<std::string> config_json;
  for (const auto& [section, members] : sections) {
    config_json.push_back(
        fmt::format("{}: {{{}}}", json_string(section), fmt::join(members, ", ")));
  }
  const auto audio = std::find_if(sections.begin(), sections.end(),
                                  [](const auto& section) { return section.first == "audio"; });
  out += fmt::format("\"audio\": {{{}}}, \"config\": {{{}}}, ", fmt::join(audio->second, ", "),
                     fmt::join(config_json, ", "));
  if (!checkpoint.speakers.empty()) {  // a model of several speakers: its rows by name
    out += fmt::format("\"speakers\": {}, ", quoted_list(checkpoint.speakers));
  }
  out += fmt::format("\"symbols\": {}, \"params\": {}, \"metrics\": {{{}}}, \"tensors\": [",
                     quoted_list(checkpoint.symbols), report.parameter_count, metrics);
  bool first = true;
  for (const auto& [name, tensor] : checkpoint.tensors) {
    out += fmt::format("{}{{\"name\": {}, \"shape\": [{}], \"dtype\": \"{}\", \"l2\": {}}}",
                       first ? "" : ", ", json_string(name), fmt::join(tensor.sizes(), ", "),
                       dtype_name(tensor), l2(tensor));
    first = false;
  }
  return out + "]}\n";
}

}  // namespace tts::models
