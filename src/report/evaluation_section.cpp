#include "evaluation_section.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <system_error>

#include "run_files.h"
#include "tts/core/error.h"
#include "tts/formats/json_reader.h"
#include "tts/report/run_report.h"

namespace tts::report {
namespace fs = std::filesystem;
namespace {

using formats::JsonValue;

// A figure of a means object: its value, "" when null (undefined) or absent.
std::string figure(const JsonValue& means, const char* key, int digits) {
  const JsonValue* value = means.find(key);
  if (value == nullptr || value->kind != JsonValue::Kind::kNumber) return "&ndash;";
  double number = NAN;
  try {
    number = std::stod(value->text);
  } catch (const std::exception&) {
    return "&ndash;";
  }
  return std::isfinite(number) ? fmt::format("{:.{}f}", number, digits) : "&ndash;";
}

std::string means_cells(const JsonValue& means) {
  return fmt::format(
      "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
      "<td class=\"num\">{}</td><td class=\"num\">{}</td>",
      figure(means, "utterances", 0), figure(means, "mcd_db", 2), figure(means, "f0_rmse_hz", 1),
      figure(means, "vde", 3), figure(means, "cer", 3));
}

std::string warning(const std::string& text) {
  return "<p class=\"warn\">" + html_escape(text) + "</p>";
}

}  // namespace

std::string evaluation_section(const fs::path& run) {
  const fs::path file = run / kEvaluationFolder / "evaluate.json";
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(file, ec))) return "";
  const std::string name = std::string(kEvaluationFolder) + "/evaluate.json";
  std::string html =
      "<h2 id=\"evaluation\">Evaluation (<code>" + html_escape(name) + "</code>)</h2>";
  std::string why;
  const std::optional<std::string> text = read_bounded(file, kEvaluationBytes, &why);
  if (!text) return html + warning(name + ": " + why);
  JsonValue json;
  try {
    formats::JsonLimits limits;
    limits.max_bytes = static_cast<int64_t>(kEvaluationBytes);
    json = formats::parse_json(*text, name, limits);
  } catch (const Error& e) {
    return html + warning(e.what());
  }
  const JsonValue* summary = json.find("summary");
  const JsonValue* speakers = json.find("speakers");
  if (summary == nullptr || summary->kind != JsonValue::Kind::kObject) {
    return html + warning(name + ": expected an object \"summary\" (tts-train evaluate's " +
                          "report), found " + (summary ? summary->kind_name() : "none"));
  }
  html +=
      "<p>MCD in dB and F0 RMSE in Hz over a DTW path of the mel-cepstra, VDE the share of "
      "frames whose voicing differs, CER with a recognizer (docs/evaluate.md): means over "
      "utterances.</p>";
  html +=
      "<table><tr><th></th><th>utterances</th><th>MCD (dB)</th><th>F0 RMSE (Hz)</th>"
      "<th>VDE</th><th>CER</th></tr>";
  html += "<tr><th>all</th>" + means_cells(*summary) + "</tr>";
  if (speakers != nullptr && speakers->kind == JsonValue::Kind::kObject) {
    for (const auto& [speaker, means] : speakers->members) {
      html += "<tr><td>" + html_escape(speaker) + "</td>" + means_cells(means) + "</tr>";
    }
  }
  return html + "</table>";
}

}  // namespace tts::report
