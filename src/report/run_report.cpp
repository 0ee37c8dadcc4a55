#include "tts/report/run_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <set>

#include "plot_canvas.h"
#include "tts/core/error.h"

namespace tts::report {
namespace fs = std::filesystem;
namespace {

// ---- reading the run, bounded ----

// The size of `path` when it is a regular file (a symlink is not followed); otherwise nullopt and
// `why` says what was wrong.
std::optional<uint64_t> regular_file_size(const fs::path& path, std::string* why) {
  std::error_code ec;
  auto status = fs::symlink_status(path, ec);
  if (ec || !fs::exists(status)) {
    *why = "missing";
    return std::nullopt;
  }
  if (!fs::is_regular_file(status)) {
    *why = "not a regular file (a symlink or a directory is not followed)";
    return std::nullopt;
  }
  uint64_t size = fs::file_size(path, ec);
  if (ec) {
    *why = "cannot be read: " + ec.message();
    return std::nullopt;
  }
  return size;
}

// `count` bytes of `path` from byte `start`; nullopt (and `why`) when they cannot be read.
std::optional<std::string> read_range(const fs::path& path, uint64_t start, uint64_t count,
                                      std::string* why) {
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(start));
  std::string bytes(count, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(count));
  if (!in) {
    *why = "cannot be read";
    return std::nullopt;
  }
  return bytes;
}

// Bytes of `path` when it is a regular file of at most `max_bytes`; otherwise nullopt and `why`
// says what was wrong.
std::optional<std::string> read_bounded(const fs::path& path, uint64_t max_bytes,
                                        std::string* why) {
  std::optional<uint64_t> size = regular_file_size(path, why);
  if (!size) return std::nullopt;
  if (*size > max_bytes) {
    *why = fmt::format("{} bytes, more than the {} this report reads", *size, max_bytes);
    return std::nullopt;
  }
  return read_range(path, 0, *size, why);
}

// The last `max_bytes` of a regular file, starting after a line break when cut.
std::optional<std::string> read_tail(const fs::path& path, uint64_t max_bytes, bool* cut,
                                     std::string* why) {
  std::optional<uint64_t> size = regular_file_size(path, why);
  if (!size) return std::nullopt;
  *cut = *size > max_bytes;
  const uint64_t start = *cut ? *size - max_bytes : 0;
  std::optional<std::string> bytes = read_range(path, start, *size - start, why);
  if (bytes && *cut) {
    size_t newline = bytes->find('\n');
    bytes->erase(0, newline == std::string::npos ? bytes->size() : newline + 1);
  }
  return bytes;
}

// Regular files and symlinks directly in `dir`, at most `max_entries` looked at.
std::vector<fs::directory_entry> entries_of(const fs::path& dir, size_t max_entries) {
  std::vector<fs::directory_entry> entries;
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(dir, ec))) return entries;
  fs::directory_iterator it(dir, ec);
  for (size_t seen = 0; !ec && it != fs::directory_iterator() && seen < max_entries;
       it.increment(ec), ++seen) {
    entries.push_back(*it);
  }
  return entries;
}

std::string base64(const std::string& bytes) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  auto byte = [&](size_t at) {
    return static_cast<uint32_t>(static_cast<unsigned char>(bytes[at]));
  };
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t v = byte(i) << 16 | byte(i + 1) << 8 | byte(i + 2);
    for (int shift : {18, 12, 6, 0}) out += kAlphabet[(v >> shift) & 63];
  }
  if (i < bytes.size()) {
    uint32_t v = byte(i) << 16 | (i + 1 < bytes.size() ? byte(i + 1) << 8 : 0);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

// ---- metrics ----

struct Metrics {
  std::vector<MetricsLine> records;
  size_t skipped = 0;  // lines that were too long or not a metrics record
  bool cut = false;    // only the file's tail was read
  std::string problem;
};

Metrics read_metrics(const fs::path& path, const ReportLimits& limits) {
  Metrics metrics;
  std::string why;
  auto text = read_tail(path, limits.metrics_bytes, &metrics.cut, &why);
  if (!text) {
    metrics.problem = "metrics.jsonl: " + why;
    return metrics;
  }
  size_t at = 0;
  while (at < text->size()) {
    size_t end = text->find('\n', at);
    if (end == std::string::npos) end = text->size();
    size_t length = end - at;
    if (length > 0) {
      std::optional<MetricsLine> line;
      if (length <= limits.line_bytes) {
        line = parse_metrics_line(text->substr(at, length), limits.keys_per_record);
      }
      if (line) {
        metrics.records.push_back(std::move(*line));
      } else {
        ++metrics.skipped;
      }
    }
    at = end + 1;
  }
  return metrics;
}

using Points = std::vector<std::pair<double, double>>;

// (step, value) of `key` in the records of `kind`, by step; a step written twice (a resumed run
// redoes steps after its checkpoint) keeps its last value.
Points series_of(const Metrics& metrics, const std::string& kind, const std::string& key) {
  std::map<double, double> by_step;
  for (const auto& record : metrics.records) {
    if (record.kind != kind) continue;
    auto step = record.values.find("step");
    auto value = record.values.find(key);
    if (step == record.values.end() || value == record.values.end()) continue;
    if (!std::isfinite(step->second) || !std::isfinite(value->second)) continue;
    by_step[step->second] = value->second;
  }
  return Points(by_step.begin(), by_step.end());
}

Points thinned(const Points& points, size_t max_points) {
  if (points.size() <= max_points || max_points < 2) return points;
  Points out;
  double stride = static_cast<double>(points.size() - 1) / static_cast<double>(max_points - 1);
  for (size_t i = 0; i < max_points; ++i) {
    out.push_back(points[static_cast<size_t>(std::llround(static_cast<double>(i) * stride))]);
  }
  return out;
}

std::optional<double> last_value(const Metrics& metrics, const std::string& kind,
                                 const std::string& key) {
  Points points = series_of(metrics, kind, key);
  if (points.empty()) return std::nullopt;
  return points.back().second;
}

// ---- SVG charts ----

struct Series {
  std::string label;
  Points points;
  bool dashed = false;
};

std::string css_color(const plotting::Color& c) {
  return fmt::format("#{:02x}{:02x}{:02x}", static_cast<int>(std::lround(c.r * 255)),
                     static_cast<int>(std::lround(c.g * 255)),
                     static_cast<int>(std::lround(c.b * 255)));
}

std::string number(double v) {
  if (std::abs(v) >= 1e5 || (std::abs(v) < 1e-3 && v != 0)) return fmt::format("{:.3g}", v);
  return fmt::format("{:.4g}", v);
}

struct ChartOptions {
  std::string y_label;
  bool log_y = false;
  std::optional<double> y_min;
  std::optional<double> y_max;
  bool stacked = false;  // areas stacked from the first series up
};

ChartOptions linear_y(const std::string& label, std::optional<double> min = std::nullopt,
                      std::optional<double> max = std::nullopt, bool stacked = false) {
  ChartOptions options;
  options.y_label = label;
  options.y_min = min;
  options.y_max = max;
  options.stacked = stacked;
  return options;
}

ChartOptions logarithmic_y(const std::string& label) {
  ChartOptions options;
  options.y_label = label;
  options.log_y = true;
  return options;
}

// An inline SVG line (or stacked area) chart of `series` against the training step.
std::string svg_chart(const std::string& id, const std::vector<Series>& series_in,
                      const ChartOptions& options) {
  std::vector<Series> series = series_in;
  if (options.stacked) {
    // Cumulative sums over the steps every series has.
    std::map<double, double> total;
    for (auto& s : series) {
      for (auto& [x, y] : s.points) y = (total[x] += std::max(0.0, y));
    }
  }
  const double width = 640;
  const double height = 300;
  const double left = 64;
  const double right = 24;  // room for the last x tick label
  const double top = 12;
  const double bottom = 40;
  double x_lo = INFINITY;
  double x_hi = -INFINITY;
  double y_lo = INFINITY;
  double y_hi = -INFINITY;
  for (const auto& s : series) {
    for (const auto& [x, y] : s.points) {
      if (options.log_y && y <= 0) continue;
      x_lo = std::min(x_lo, x);
      x_hi = std::max(x_hi, x);
      y_lo = std::min(y_lo, y);
      y_hi = std::max(y_hi, y);
    }
  }
  std::string svg = fmt::format(
      "<svg class=\"chart\" id=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" "
      "xmlns=\"http://www.w3.org/2000/svg\">",
      id, width, height);
  if (!(x_lo <= x_hi)) {
    return svg + fmt::format(
                     "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" class=\"empty\">no data in "
                     "metrics.jsonl yet</text></svg>",
                     width / 2, height / 2);
  }
  if (options.y_min) y_lo = std::min(y_lo, *options.y_min);
  if (options.stacked) y_lo = 0;
  if (options.y_max) y_hi = std::max(y_hi, *options.y_max);
  if (x_hi == x_lo) x_hi = x_lo + 1;
  bool log_y = options.log_y && y_lo > 0;
  auto ty = [&](double v) { return log_y ? std::log10(v) : v; };
  double ly = ty(y_lo);
  double hy = ty(y_hi);
  if (hy <= ly) hy = ly + (log_y ? 1 : std::max(1e-9, std::abs(ly) * 0.1 + 1e-9));
  if (!log_y && !options.y_max) hy += (hy - ly) * 0.05;
  const double pw = width - left - right;
  const double ph = height - top - bottom;
  auto px = [&](double x) { return left + (x - x_lo) / (x_hi - x_lo) * pw; };
  auto py = [&](double y) { return top + ph - (ty(y) - ly) / (hy - ly) * ph; };

  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"frame\"/>", left,
                     top, pw, ph);
  // Y ticks: powers of ten on a log axis, round numbers otherwise.
  std::vector<double> y_ticks;
  if (log_y) {
    for (double e = std::floor(ly); e <= std::ceil(hy); ++e) {
      for (double m : {1.0, 2.0, 5.0}) {
        double v = m * std::pow(10.0, e);
        if (ty(v) >= ly - 1e-9 && ty(v) <= hy + 1e-9 && (m == 1 || hy - ly < 1.5)) {
          y_ticks.push_back(v);
        }
      }
    }
  } else {
    y_ticks = plotting::nice_ticks(ly, hy, 5);
  }
  double y_step = y_ticks.size() > 1 ? y_ticks[1] - y_ticks[0] : 0;
  for (double v : y_ticks) {
    double y = py(v);
    svg += fmt::format(
        "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" class=\"grid\"/>"
        "<text x=\"{3}\" y=\"{2:.1f}\" class=\"tick\" text-anchor=\"end\" "
        "dominant-baseline=\"middle\">{4}</text>",
        left, left + pw, y, left - 5, log_y ? number(v) : plotting::tick_label(v, y_step));
  }
  auto x_ticks = plotting::nice_ticks(x_lo, x_hi, 6);
  double x_step = x_ticks.size() > 1 ? x_ticks[1] - x_ticks[0] : 0;
  for (double v : x_ticks) {
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" class=\"tickmark\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" class=\"tick\" text-anchor=\"middle\">{4}</text>",
        px(v), top + ph, top + ph + 4, top + ph + 16, plotting::tick_label(v, x_step));
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" class=\"label\" text-anchor=\"middle\">step</text>",
                     left + pw / 2, height - 6);
  svg += fmt::format(
      "<text transform=\"translate(14 {}) rotate(-90)\" class=\"label\" "
      "text-anchor=\"middle\">{}</text>",
      top + ph / 2, html_escape(options.y_label));

  const auto& colors = plotting::palette();
  // Stacked areas are drawn top series first, so that each lower one covers its part.
  std::vector<size_t> order(series.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = options.stacked ? order.size() - 1 - i : i;
  for (size_t i : order) {
    const Series& s = series[i];
    if (s.points.empty()) continue;
    std::string color = css_color(colors[i % colors.size()]);
    std::string path;
    for (const auto& [x, y] : s.points) {
      if (log_y && y <= 0) continue;
      path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "M" : " L", px(x), py(y));
    }
    if (path.empty()) continue;
    if (options.stacked) {
      path += fmt::format(" L{:.1f},{:.1f} L{:.1f},{:.1f} Z", px(s.points.back().first), py(0),
                          px(s.points.front().first), py(0));
      svg += fmt::format(
          "<path d=\"{}\" fill=\"{}\" fill-opacity=\"0.85\" stroke=\"none\" "
          "data-series=\"{}\"><title>{}</title></path>",
          path, color, html_escape(s.label), html_escape(s.label));
    } else {
      svg += fmt::format(
          "<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.6\"{} "
          "data-series=\"{}\"><title>{}</title></path>",
          path, color, s.dashed ? " stroke-dasharray=\"5 4\"" : "", html_escape(s.label),
          html_escape(s.label));
    }
  }
  svg += "</svg>";
  // The legend, in HTML below the chart (it wraps on narrow screens), with the last values.
  std::string legend = "<div class=\"legend\">";
  for (size_t i = 0; i < series.size(); ++i) {
    const Series& s = series[i];
    std::string last = s.points.empty() ? "no data"
                                        : fmt::format("{} at step {:.0f}",
                                                      number(series_in[i].points.back().second),
                                                      s.points.back().first);
    legend += fmt::format("<span><i style=\"background:{}\"></i>{} <small>({})</small></span>",
                          css_color(colors[i % colors.size()]), html_escape(s.label), last);
  }
  return svg + legend + "</div>";
}

// ---- the page ----

std::string utc_time(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buffer;
}

std::string random_nonce() {
  std::random_device device;
  std::string bytes;
  for (int i = 0; i < 16; ++i) bytes += static_cast<char>(device() & 0xff);
  return base64(bytes);
}

// The newest step N with `dir`/`prefix`N`suffix` among the entries.
std::optional<int64_t> newest_step(const std::vector<fs::directory_entry>& entries,
                                   const std::regex& name) {
  std::optional<int64_t> newest;
  for (const auto& entry : entries) {
    std::smatch match;
    std::string file = entry.path().filename().string();
    if (!std::regex_match(file, match, name) || match[1].length() > 15) continue;
    int64_t step = std::stoll(match[1].str());
    if (!newest || step > *newest) newest = step;
  }
  return newest;
}

const char* kStyle = R"(
body { font-family: system-ui, -apple-system, "DejaVu Sans", sans-serif; margin: 0 auto;
       max-width: 1320px; padding: 16px 24px; color: #1d1d1f; background: #fff; }
h1 { font-size: 1.5em; margin: 0.2em 0; } h2 { font-size: 1.2em; margin-top: 1.6em;
     border-bottom: 1px solid #ddd; padding-bottom: 4px; }
.meta { color: #555; } .warn { color: #a15c00; }
.grid2 { display: grid; grid-template-columns: repeat(auto-fit, minmax(520px, 1fr)); gap: 18px; }
figure { margin: 0; } figcaption { font-weight: 600; margin-bottom: 4px; }
svg.chart { width: 100%; height: auto; background: #fff; }
svg .frame { fill: none; stroke: #333; } svg .grid { stroke: #e6e6e6; }
svg .tickmark { stroke: #333; } svg .tick { font-size: 11px; fill: #333; }
svg .label { font-size: 12px; fill: #222; } svg .empty { font-size: 14px; fill: #888; }
.legend span { margin-right: 14px; font-size: 0.9em; white-space: nowrap; }
.legend i { display: inline-block; width: 14px; height: 4px; margin-right: 5px;
            vertical-align: middle; }
img.plot { max-width: 100%; border: 1px solid #ddd; }
table { border-collapse: collapse; } td, th { padding: 3px 10px; border-bottom: 1px solid #eee;
                                              text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
pre { background: #f6f6f6; padding: 10px; overflow-x: auto; font-size: 0.85em; }
.broken { outline: 3px solid #c00; }
)";

// Marks images that did not decode, for the reader and for tests (data-images-ok).
const char* kCheckScript = R"(
window.addEventListener('load', function () {
  var ok = 0, broken = 0;
  document.querySelectorAll('img').forEach(function (img) {
    if (img.complete && img.naturalWidth > 0) { ok++; } else {
      broken++; img.classList.add('broken');
      console.error('report: image ' + img.alt + ' could not be decoded');
    }
  });
  document.body.setAttribute('data-images-ok', ok);
  document.body.setAttribute('data-images-broken', broken);
});
)";

}  // namespace

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::optional<MetricsLine> parse_metrics_line(const std::string& line, size_t max_keys) {
  size_t at = 0;
  auto space = [&] {
    while (at < line.size() && (line[at] == ' ' || line[at] == '\t' || line[at] == '\r')) ++at;
  };
  auto take = [&](char c) {
    space();
    if (at < line.size() && line[at] == c) {
      ++at;
      return true;
    }
    return false;
  };
  // A JSON string; escapes are kept as two characters except \" and \\ (keys and kinds are plain).
  auto string = [&](std::string* out) {
    if (!take('"')) return false;
    out->clear();
    while (at < line.size() && line[at] != '"') {
      if (line[at] == '\\' && at + 1 < line.size()) {
        char next = line[at + 1];
        out->push_back(next == '"' || next == '\\' ? next : '\\');
        if (next != '"' && next != '\\') out->push_back(next);
        at += 2;
      } else {
        out->push_back(line[at++]);
      }
    }
    return take('"');
  };
  MetricsLine record;
  bool has_kind = false;
  if (!take('{')) return std::nullopt;
  if (take('}')) return std::nullopt;
  do {
    std::string key;
    if (!string(&key) || !take(':')) return std::nullopt;
    space();
    if (at < line.size() && line[at] == '"') {
      std::string value;
      if (!string(&value)) return std::nullopt;
      if (key == "kind") {
        record.kind = value;
        has_kind = true;
      }
    } else if (line.compare(at, 4, "null") == 0) {
      at += 4;
      record.values[key] = NAN;
    } else if (line.compare(at, 4, "true") == 0 || line.compare(at, 5, "false") == 0) {
      at += line[at] == 't' ? 4 : 5;
    } else {
      const char* begin = line.c_str() + at;
      char* end = nullptr;
      double value = std::strtod(begin, &end);
      if (end == begin) return std::nullopt;
      at += static_cast<size_t>(end - begin);
      record.values[key] = value;
    }
    if (record.values.size() > max_keys) return std::nullopt;
  } while (take(','));
  if (!take('}')) return std::nullopt;
  space();
  if (at != line.size() || !has_kind) return std::nullopt;
  return record;
}

std::string render_run_report(const std::string& run_dir, const ReportLimits& limits) {
  const fs::path run(run_dir);
  std::error_code ec;
  TTS_CHECK(fs::is_directory(run, ec),
            "report: '{}' is not a directory; give a run directory (train --out RUN)", run_dir);
  TTS_CHECK(fs::exists(run / "metrics.jsonl", ec) || fs::exists(run / "config.yaml", ec),
            "report: '{}' has neither metrics.jsonl nor config.yaml: not a run directory "
            "(train --out RUN writes both)",
            run_dir);
  std::vector<std::string> warnings;

  Metrics metrics = read_metrics(run / "metrics.jsonl", limits);
  if (!metrics.problem.empty()) warnings.push_back(metrics.problem);
  if (metrics.cut) {
    warnings.push_back(
        fmt::format("metrics.jsonl is larger than {} MB: only its last {} MB are shown",
                    limits.metrics_bytes >> 20, limits.metrics_bytes >> 20));
  }
  if (metrics.skipped > 0) {
    warnings.push_back(fmt::format(
        "{} line(s) of metrics.jsonl skipped (not a metrics record, or longer than {} bytes)",
        metrics.skipped, limits.line_bytes));
  }
  std::string config_problem;
  std::optional<std::string> config =
      read_bounded(run / "config.yaml", limits.config_bytes, &config_problem);
  if (!config) warnings.push_back("config.yaml: " + config_problem);
  std::string why;

  auto curve = [&](const std::string& label, const std::string& kind, const std::string& key,
                   bool dashed = false) {
    return Series{label, thinned(series_of(metrics, kind, key), limits.points_per_curve), dashed};
  };

  std::string nonce = random_nonce();
  std::string name =
      run.filename().empty() ? run.parent_path().filename().string() : run.filename().string();
  std::string html = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; "
      "media-src data:; style-src 'unsafe-inline'; script-src 'nonce-{}'\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>tts-train run {}</title><style>{}</style></head><body>\n",
      nonce, html_escape(name), kStyle);
  html += fmt::format("<h1>tts-train run <code>{}</code></h1>", html_escape(name));
  html +=
      fmt::format("<p class=\"meta\">{} &middot; report written {} &middot; {} metrics records</p>",
                  html_escape(fs::absolute(run, ec).string()),
                  utc_time(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now())),
                  metrics.records.size());
  for (const auto& warning : warnings) {
    html += fmt::format("<p class=\"warn\">&#9888; {}</p>", html_escape(warning));
  }

  // The summary: where the run stands.
  html += "<h2 id=\"summary\">Summary</h2><table>";
  auto row = [&](const std::string& what, std::optional<double> value, const char* format) {
    if (value)
      html += fmt::format("<tr><th>{}</th><td class=\"num\">{}</td></tr>", what,
                          fmt::format(fmt::runtime(format), *value));
  };
  row("last step", last_value(metrics, "train", "step"), "{:.0f}");
  row("training loss", last_value(metrics, "train", "loss"), "{:.4f}");
  row("validation loss", last_value(metrics, "val", "loss"), "{:.4f}");
  row("diagonal score (teacher-forced)", last_value(metrics, "val", "diagonal_score"), "{:.3f}");
  row("focus rate (teacher-forced)", last_value(metrics, "val", "focus_rate"), "{:.3f}");
  row("diagonal score (free-running)", last_value(metrics, "val", "infer_diagonal_score"),
      "{:.3f}");
  row("stop token fired (free-running)", last_value(metrics, "val", "infer_stop_fired"), "{:.2f}");
  row("mel frames/s", last_value(metrics, "train", "mel_frames_per_s"), "{:.0f}");
  row("seconds per step", last_value(metrics, "train", "step_s"), "{:.3f}");
  html += "</table>";

  // Curves.
  Points loss = series_of(metrics, "train", "loss");
  bool wide = false;
  if (!loss.empty()) {
    auto [lo, hi] = std::minmax_element(loss.begin(), loss.end(),
                                        [](auto& a, auto& b) { return a.second < b.second; });
    wide = lo->second > 0 && hi->second / lo->second > 20;
  }
  html += "<h2 id=\"curves\">Loss and alignment</h2><div class=\"grid2\">";
  html += "<figure><figcaption>Loss</figcaption>" +
          svg_chart("loss",
                    {curve("training loss", "train", "loss"),
                     curve("validation loss", "val", "loss", true)},
                    wide ? logarithmic_y("loss (log scale)") : linear_y("loss")) +
          "</figure>";
  std::vector<Series> parts;
  for (const char* part :
       {"mel_loss", "postnet_loss", "gate_loss", "linear_loss", "guided_attention_loss"}) {
    Series s = curve(part, "train", part);
    if (!s.points.empty()) parts.push_back(std::move(s));
  }
  html += "<figure><figcaption>Training loss parts</figcaption>" +
          svg_chart("loss_parts", parts, logarithmic_y("loss (log scale)")) + "</figure>";
  ChartOptions unit = linear_y("score", 0.0, 1.0);
  html +=
      "<figure><figcaption>Alignment scores at each validation (1 = a sharp "
      "diagonal)</figcaption>" +
      svg_chart("alignment_scores",
                {curve("diagonal score", "val", "diagonal_score"),
                 curve("focus rate", "val", "focus_rate"),
                 curve("diagonal score, free-running", "val", "infer_diagonal_score", true),
                 curve("focus rate, free-running", "val", "infer_focus_rate", true)},
                unit) +
      "</figure>";
  html += "<figure><figcaption>Free-running synthesis: stop token and length</figcaption>" +
          svg_chart("free_running",
                    {curve("stop token fired (fraction)", "val", "infer_stop_fired"),
                     curve("max_decoder_steps hit (fraction)", "val", "infer_max_steps_hit"),
                     curve("generated / real frames", "val", "infer_frame_ratio", true)},
                    linear_y("fraction, ratio", 0.0)) +
          "</figure></div>";

  html += "<h2 id=\"speed\">Throughput and where a step's time goes</h2><div class=\"grid2\">";
  html += "<figure><figcaption>Throughput (all ranks)</figcaption>" +
          svg_chart("throughput", {curve("mel frames/s", "train", "mel_frames_per_s")},
                    linear_y("mel frames/s", 0.0)) +
          "</figure>";
  html +=
      "<figure><figcaption>Seconds per step by phase (mean over ranks, stacked)</figcaption>" +
      svg_chart("phases",
                {curve("data wait", "train", "data_wait_s"), curve("forward", "train", "forward_s"),
                 curve("backward", "train", "backward_s"),
                 curve("exposed communication", "train", "comm_exposed_s"),
                 curve("optimizer", "train", "optimizer_s")},
                linear_y("seconds per step", 0.0, std::nullopt, true)) +
      "</figure>";
  html +=
      "<figure><figcaption>Rank spread (slowest rank's step time / mean; 1 = "
      "balanced)</figcaption>" +
      svg_chart("rank_spread",
                {curve("rank spread", "train", "rank_spread"),
                 curve("padded-frame imbalance", "train", "padded_frames_imbalance", true)},
                linear_y("ratio", 1.0)) +
      "</figure>";
  html += "<figure><figcaption>Learning rate and gradient norm</figcaption>" +
          svg_chart(
              "optimizer",
              {curve("learning rate", "train", "lr"), curve("gradient norm", "train", "grad_norm")},
              logarithmic_y("value (log scale)")) +
          "</figure></div>";

  // The latest validation's plots and audio.
  html += "<h2 id=\"validation\">Latest validation</h2>";
  auto plots = entries_of(run / "plots", limits.directory_entries);
  std::optional<int64_t> plot_step = newest_step(plots, std::regex(R"(step_(\d+)_alignment\.png)"));
  if (!plot_step) plot_step = newest_step(plots, std::regex(R"(step_(\d+)_mel\.png)"));
  if (plot_step) {
    html += fmt::format("<p>Plots of step {} (<code>plots/step_{}_*.png</code>).</p>", *plot_step,
                        *plot_step);
    for (const char* kind : {"alignment", "mel"}) {
      std::string file = fmt::format("step_{}_{}.png", *plot_step, kind);
      auto png = read_bounded(run / "plots" / file, limits.image_bytes, &why);
      if (png && png->compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) {
        png.reset();
        why = "not a PNG image";
      }
      if (png) {
        html += fmt::format(
            "<figure><img class=\"plot\" id=\"plot_{}\" alt=\"{}\" "
            "src=\"data:image/png;base64,{}\"></figure>",
            kind, html_escape(file), base64(*png));
      } else {
        html +=
            fmt::format("<p class=\"warn\">plots/{}: {}</p>", html_escape(file), html_escape(why));
      }
    }
  } else {
    html +=
        "<p>No plots yet (<code>plots/step_N_alignment.png</code> appear at each validation "
        "when <code>logging.plots</code> is on).</p>";
  }
  auto samples = entries_of(run / "samples", limits.directory_entries);
  if (auto sample_step = newest_step(samples, std::regex(R"(step_(\d+)\.wav)"))) {
    std::string file = fmt::format("step_{}.wav", *sample_step);
    auto wav = read_bounded(run / "samples" / file, limits.audio_bytes, &why);
    if (wav &&
        (wav->size() < 12 || wav->compare(0, 4, "RIFF") != 0 || wav->compare(8, 4, "WAVE") != 0)) {
      wav.reset();
      why = "not a WAV file";
    }
    if (wav) {
      html += fmt::format(
          "<p>Free-running synthesis of step {} (Griffin-Lim): <audio controls id=\"sample\" "
          "src=\"data:audio/wav;base64,{}\"></audio></p>",
          *sample_step, base64(*wav));
    } else {
      html +=
          fmt::format("<p class=\"warn\">samples/{}: {}</p>", html_escape(file), html_escape(why));
    }
  }

  // Checkpoints: name, size, time, which one `latest` names.
  html += "<h2 id=\"checkpoints\">Checkpoints</h2>";
  auto checkpoints = entries_of(run / "checkpoints", limits.directory_entries);
  std::string latest;
  std::vector<std::tuple<std::string, uint64_t, std::time_t>> files;
  for (const auto& entry : checkpoints) {
    std::string file = entry.path().filename().string();
    auto status = entry.symlink_status(ec);
    if (file == "latest" && fs::is_symlink(status)) {
      latest = fs::read_symlink(entry.path(), ec).string();
    } else if (fs::is_regular_file(status) && file.size() > 3 &&
               file.compare(file.size() - 3, 3, ".pt") == 0) {
      auto time = fs::last_write_time(entry.path(), ec);
      auto system = std::chrono::time_point_cast<std::chrono::system_clock::duration>(
          time - fs::file_time_type::clock::now() + std::chrono::system_clock::now());
      files.emplace_back(file, entry.file_size(ec), std::chrono::system_clock::to_time_t(system));
    }
  }
  std::sort(files.begin(), files.end(),
            [](auto& a, auto& b) { return std::get<0>(a) > std::get<0>(b); });
  if (files.size() > limits.checkpoints_listed) files.resize(limits.checkpoints_listed);
  if (files.empty()) {
    html += "<p>No checkpoints.</p>";
  } else {
    html += "<table><tr><th>file</th><th>size</th><th>written</th><th></th></tr>";
    for (const auto& [file, size, time] : files) {
      html += fmt::format(
          "<tr><td><code>{}</code></td><td class=\"num\">{:.1f} MB</td><td>{}</td><td>{}</td></tr>",
          html_escape(file), static_cast<double>(size) / 1e6, utc_time(time),
          file == latest ? "&larr; latest" : "");
    }
    html += "</table>";
  }

  html += "<h2 id=\"config\">Config (<code>config.yaml</code>)</h2>";
  html += config ? "<pre>" + html_escape(*config) + "</pre>"
                 : "<p class=\"warn\">config.yaml: " + html_escape(config_problem) + "</p>";
  html += fmt::format("<script nonce=\"{}\">{}</script></body></html>\n", nonce, kCheckScript);
  return html;
}

}  // namespace tts::report
