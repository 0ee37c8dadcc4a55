// `tts-train report`: one self-contained HTML page about a run, to copy off a cluster and open
// anywhere: its config, loss and alignment curves, throughput and where a step's time goes (from
// metrics.jsonl), the latest validation's plots and audio, and its checkpoints. Images and audio
// are embedded as data: URIs, curves are inline SVG, and the page's content security policy
// forbids every network request.
//
// The run directory may come from anyone: every read is bounded (ReportLimits), only regular
// files are read (a symlink is not followed to, say, a file outside the run), embedded files must
// be what their names say (PNG, WAV), and every string from the run is HTML-escaped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tts::report {

struct ReportLimits {
  uint64_t config_bytes = 1 << 20;
  uint64_t metrics_bytes = 256ull << 20;  // a larger metrics.jsonl is read from its last bytes
  size_t line_bytes = 64 << 10;           // longer lines are skipped
  size_t keys_per_record = 256;
  size_t points_per_curve = 2000;  // longer curves are thinned evenly (first and last kept)
  uint64_t image_bytes = 16 << 20;
  uint64_t audio_bytes = 32 << 20;
  size_t directory_entries = 100000;  // entries looked at in plots/, samples/, checkpoints/
  size_t checkpoints_listed = 200;    // the newest ones
};

// One line of metrics.jsonl: a flat JSON object of numbers (null: NaN) and a "kind" string.
struct MetricsLine {
  std::string kind;
  std::map<std::string, double> values;
};

// Parses one metrics.jsonl line; nullopt when it is not a flat JSON object with a string "kind"
// and number or null values (other strings are ignored), or has more than `max_keys` keys.
std::optional<MetricsLine> parse_metrics_line(const std::string& line, size_t max_keys = 256);

// `text` with &, <, >, " and ' replaced by character references.
std::string html_escape(const std::string& text);

// The report of the run in `run_dir` as one HTML document. Throws tts::Error when `run_dir` is
// not a directory or has neither metrics.jsonl nor config.yaml (not a run).
std::string render_run_report(const std::string& run_dir, const ReportLimits& limits = {});

}  // namespace tts::report
