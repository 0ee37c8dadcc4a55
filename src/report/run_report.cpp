#include "tts/report/run_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "evaluation_section.h"
#include "run_files.h"
#include "svg_chart.h"
#include "tts/core/error.h"
#include "tts/report/metric_names.h"

namespace tts::report {
namespace fs = std::filesystem;
namespace {

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

namespace {

// What the sections of the page are drawn from.
struct Page {
  const fs::path& run;
  const ReportLimits& limits;
  const Metrics& metrics;
  const RunContents& contents;

  // The curve of `key` in the records of `kind`, thinned to the limit.
  Series curve(const std::string& label, const std::string& kind, const std::string& key,
               bool dashed = false) const {
    return Series{label, thinned(series_of(metrics, kind, key), limits.points_per_curve), dashed};
  }
  std::string figure(const std::string& caption, const std::string& id,
                     const std::vector<Series>& series, const ChartOptions& options) const {
    return "<figure><figcaption>" + caption + "</figcaption>" + svg_chart(id, series, options) +
           "</figure>";
  }
};

std::string head(const std::string& name, const std::string& nonce) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; "
      "media-src data:; style-src 'unsafe-inline'; script-src 'nonce-{}'\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>tts-train run {}</title><style>{}</style></head><body>\n",
      nonce, html_escape(name), kStyle);
}

// Where the run stands: the last values of the metrics a reader looks for first.
std::string summary_section(const Metrics& metrics, const RunContents& contents) {
  namespace metric = report::metric;
  std::string html = "<h2 id=\"summary\">Summary</h2><table>";
  auto row = [&](const std::string& what, const std::string& kind, const std::string& key,
                 const std::string& format) {
    if (std::optional<double> value = last_value(metrics, kind, key)) {
      html += fmt::format("<tr><th>{}</th><td class=\"num\">{}</td></tr>", html_escape(what),
                          fmt::format(fmt::runtime(format), *value));
    }
  };
  row("last step", metric::kTrain, metric::kStep, "{:.0f}");
  row(contents.loss, metric::kTrain, metric::kLoss, "{:.4f}");
  row(contents.validation_loss, metric::kVal, metric::kLoss, "{:.4f}");
  for (const SummaryRow& own : contents.summary) row(own.label, own.kind, own.key, own.format);
  row("mel frames/s", metric::kTrain, metric::kMelFramesPerSecond, "{:.0f}");
  row("seconds per step", metric::kTrain, metric::kStepSeconds, "{:.3f}");
  return html + "</table>";
}

std::string learning_section(const Page& page) {
  namespace metric = report::metric;
  const char* train = metric::kTrain;
  const char* val = metric::kVal;
  Points loss = series_of(page.metrics, train, metric::kLoss);
  bool wide = false;
  if (!loss.empty()) {
    auto [lo, hi] = std::minmax_element(loss.begin(), loss.end(),
                                        [](auto& a, auto& b) { return a.second < b.second; });
    wide = lo->second > 0 && hi->second / lo->second > 20;
  }
  const RunContents& contents = page.contents;
  std::string html = "<h2 id=\"curves\">Losses and validation</h2><div class=\"grid2\">";
  html += page.figure("Loss", "loss",
                      {page.curve(contents.loss, train, metric::kLoss),
                       page.curve(contents.validation_loss, val, metric::kLoss, true)},
                      wide ? logarithmic_y("loss (log scale)") : linear_y("loss"));
  // Every other loss the family logged: the records' keys ending in "_loss".
  std::vector<std::string> part_names;
  for (const auto& record : page.metrics.records) {
    if (record.kind != train) continue;
    for (const auto& [key, value] : record.values) {
      const bool part = key.size() > 5 && key.compare(key.size() - 5, 5, "_loss") == 0;
      if (part && std::find(part_names.begin(), part_names.end(), key) == part_names.end()) {
        part_names.push_back(key);
      }
    }
  }
  std::vector<Series> parts;
  for (const std::string& part : part_names) parts.push_back(page.curve(part, train, part.c_str()));
  if (!parts.empty()) {  // a family whose loss has no parts logs none
    html +=
        page.figure("Training loss parts", "loss_parts", parts, logarithmic_y("loss (log scale)"));
  }
  for (const ChartSpec& chart : contents.charts) {
    std::vector<Series> series;
    for (const CurveSpec& c : chart.curves) {
      series.push_back(page.curve(c.label, c.kind, c.key, c.dashed));
    }
    html += page.figure(html_escape(chart.caption), chart.id, series,
                        chart.log_y ? logarithmic_y(chart.y_label)
                                    : linear_y(chart.y_label, chart.y_min, chart.y_max));
  }
  // Each optimizer's gradient norm and learning rate: "grad_norm" and "lr" are the first's, the
  // others' keys end in their names.
  std::vector<std::string> optimizer_keys;
  for (const auto& record : page.metrics.records) {
    if (record.kind != train) continue;
    for (const auto& [key, value] : record.values) {
      if (key.rfind(metric::kGradNorm, 0) == 0 &&
          std::find(optimizer_keys.begin(), optimizer_keys.end(), key) == optimizer_keys.end()) {
        optimizer_keys.push_back(key);
      }
    }
  }
  const std::string base = metric::kGradNorm;
  std::vector<Series> norms, rates;
  for (const std::string& key : optimizer_keys) {
    const std::string suffix = key.substr(base.size());
    std::string name = suffix.empty() ? (contents.optimizers.empty() ? std::string("optimizer")
                                                                     : contents.optimizers[0])
                                      : suffix.substr(1);
    norms.push_back(page.curve(name, train, key));
    rates.push_back(page.curve(name, train, metric::kLearningRate + suffix));
  }
  html += page.figure("Gradient norm of each optimizer", "grad_norms", norms,
                      logarithmic_y("gradient norm (log scale)"));
  html += page.figure("Learning rate of each optimizer", "learning_rates", rates,
                      logarithmic_y("learning rate (log scale)"));
  return html + "</div>";
}

std::string speed_section(const Page& page) {
  namespace metric = report::metric;
  const char* train = metric::kTrain;
  std::string html =
      "<h2 id=\"speed\">Throughput and where a step's time goes</h2><div class=\"grid2\">";
  html += page.figure("Throughput (all ranks)", "throughput",
                      {page.curve("mel frames/s", train, metric::kMelFramesPerSecond)},
                      linear_y("mel frames/s", 0.0));
  html += page.figure("Seconds per step by phase (mean over ranks, stacked)", "phases",
                      {page.curve("data wait", train, metric::kDataWait),
                       page.curve("forward", train, metric::kForward),
                       page.curve("backward", train, metric::kBackward),
                       page.curve("exposed communication", train, metric::kCommExposed),
                       page.curve("optimizer", train, metric::kOptimizer)},
                      linear_y("seconds per step", 0.0, std::nullopt, true));
  html += page.figure(
      "Rank spread (slowest rank's step time / mean; 1 = balanced)", "rank_spread",
      {page.curve("rank spread", train, metric::kRankSpread),
       page.curve("padded-frame imbalance", train, metric::kPaddedFramesImbalance, true)},
      linear_y("ratio", 1.0));
  return html + "</div>";
}

// The latest validation's plots and audio samples, those the family writes, embedded.
std::string validation_section(const Page& page) {
  const fs::path& run = page.run;
  const ReportLimits& limits = page.limits;
  const RunContents& contents = page.contents;
  std::string why;
  std::string html = "<h2 id=\"validation\">Latest validation</h2>";
  if (contents.plots.empty() && contents.samples.empty()) {
    return html + "<p>This run's family is not known: its plots and samples are not shown.</p>";
  }
  auto plots = entries_of(run / "plots", limits.directory_entries);
  std::optional<int64_t> plot_step;
  for (const PlotSpec& plot : contents.plots) {
    if (plot_step) break;
    plot_step = newest_step(plots, "step_", "_" + plot.name + ".png");
  }
  if (plot_step) {
    html += fmt::format("<p>Plots of step {} (<code>plots/step_{}_*.png</code>).</p>", *plot_step,
                        *plot_step);
    for (const PlotSpec& plot : contents.plots) {
      std::string file = fmt::format("step_{}_{}.png", *plot_step, plot.name);
      auto png = read_bounded(run / "plots" / file, limits.image_bytes, &why);
      if (png && png->compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) {
        png.reset();
        why = "not a PNG image";
      }
      if (png) {
        html += fmt::format(
            "<figure><figcaption>{}</figcaption><img class=\"plot\" id=\"plot_{}\" "
            "alt=\"{}\" src=\"data:image/png;base64,{}\"></figure>",
            html_escape(plot.caption), html_escape(plot.name), html_escape(file), base64(*png));
      } else {
        html +=
            fmt::format("<p class=\"warn\">plots/{}: {}</p>", html_escape(file), html_escape(why));
      }
    }
  } else if (!contents.plots.empty()) {
    html += fmt::format(
        "<p>No plots yet (<code>plots/step_N_{}.png</code> appear at each validation when "
        "<code>logging.plots</code> is on).</p>",
        html_escape(contents.plots.front().name));
  }
  auto samples = entries_of(run / "samples", limits.directory_entries);
  for (const SampleSpec& sample : contents.samples) {
    auto sample_step = newest_step(samples, "step_", sample.suffix + ".wav");
    if (!sample_step) continue;
    std::string file = fmt::format("step_{}{}.wav", *sample_step, sample.suffix);
    auto wav = read_bounded(run / "samples" / file, limits.audio_bytes, &why);
    if (wav &&
        (wav->size() < 12 || wav->compare(0, 4, "RIFF") != 0 || wav->compare(8, 4, "WAVE") != 0)) {
      wav.reset();
      why = "not a WAV file";
    }
    if (wav) {
      html += fmt::format(
          "<p>{}, step {}: <audio controls id=\"sample{}\" "
          "src=\"data:audio/wav;base64,{}\"></audio></p>",
          html_escape(sample.label), *sample_step, html_escape(sample.suffix), base64(*wav));
    } else {
      html +=
          fmt::format("<p class=\"warn\">samples/{}: {}</p>", html_escape(file), html_escape(why));
    }
  }
  return html;
}

// Checkpoints: name, size, time, which one `latest` names.
std::string checkpoints_section(const Page& page) {
  std::error_code ec;
  std::string html = "<h2 id=\"checkpoints\">Checkpoints</h2>";
  auto checkpoints = entries_of(page.run / "checkpoints", page.limits.directory_entries);
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
  if (files.size() > page.limits.checkpoints_listed) files.resize(page.limits.checkpoints_listed);
  if (files.empty()) return html + "<p>No checkpoints.</p>";
  html += "<table><tr><th>file</th><th>size</th><th>written</th><th></th></tr>";
  for (const auto& [file, size, time] : files) {
    html += fmt::format(
        "<tr><td><code>{}</code></td><td class=\"num\">{:.1f} MB</td><td>{}</td><td>{}</td></tr>",
        html_escape(file), static_cast<double>(size) / 1e6, utc_time(time),
        file == latest ? "&larr; latest" : "");
  }
  return html + "</table>";
}

// What could not be read, said at the top of the page.
std::vector<std::string> metrics_warnings(const Metrics& metrics, const ReportLimits& limits) {
  std::vector<std::string> warnings;
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
  return warnings;
}

}  // namespace

std::string render_run_report(const std::string& run_dir, const RunContents& contents,
                              const ReportLimits& limits) {
  const fs::path run(run_dir);
  std::error_code ec;
  TTS_CHECK(fs::is_directory(run, ec),
            "report: '{}' is not a directory; give a run directory (train --out RUN)", run_dir);
  TTS_CHECK(fs::exists(run / "metrics.jsonl", ec) || fs::exists(run / "config.yaml", ec),
            "report: '{}' has neither metrics.jsonl nor config.yaml: not a run directory "
            "(train --out RUN writes both)",
            run_dir);
  const Metrics metrics = read_metrics(run / "metrics.jsonl", limits);
  std::vector<std::string> warnings = metrics_warnings(metrics, limits);
  std::string config_problem;
  std::optional<std::string> config =
      read_bounded(run / "config.yaml", limits.config_bytes, &config_problem);
  if (!config) warnings.push_back("config.yaml: " + config_problem);

  if (!contents.note.empty()) warnings.push_back(contents.note);
  const Page page{run, limits, metrics, contents};
  const std::string nonce = random_nonce();
  const std::string name =
      run.filename().empty() ? run.parent_path().filename().string() : run.filename().string();
  std::string html = head(name, nonce);
  html += fmt::format("<h1>tts-train run <code>{}</code></h1>", html_escape(name));
  html +=
      fmt::format("<p class=\"meta\">{} &middot; report written {} &middot; {} metrics records</p>",
                  html_escape(fs::absolute(run, ec).string()) +
                      (contents.family.empty() ? "" : " &middot; " + html_escape(contents.family)),
                  utc_time(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now())),
                  metrics.records.size());
  for (const auto& warning : warnings) {
    html += fmt::format("<p class=\"warn\">&#9888; {}</p>", html_escape(warning));
  }
  html += summary_section(metrics, contents);
  html += learning_section(page);
  html += speed_section(page);
  html += validation_section(page);
  html += evaluation_section(run);
  html += checkpoints_section(page);
  html += "<h2 id=\"config\">Config (<code>config.yaml</code>)</h2>";
  html += config ? "<pre>" + html_escape(*config) + "</pre>"
                 : "<p class=\"warn\">config.yaml: " + html_escape(config_problem) + "</p>";
  html += fmt::format("<script nonce=\"{}\">{}</script></body></html>\n", nonce, kCheckScript);
  return html;
}

}  // namespace tts::report
