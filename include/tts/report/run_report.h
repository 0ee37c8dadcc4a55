// `tts-train report`: one self-contained HTML page about a run, to copy off a cluster and open
// anywhere: its config, its family's loss and validation curves, throughput and where a step's
// time goes (from metrics.jsonl), the latest validation's plots and audio, and its checkpoints.
// Images and audio are embedded as data: URIs, curves are inline SVG, and the page's content
// security policy forbids every network request.
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

// A curve: the values of `key` in the metrics records of `kind` ("train", "val").
struct CurveSpec {
  std::string label, kind, key;
  bool dashed = false;
};

// A chart of curves against the step; y from `y_min` to `y_max` where given, log-scaled when
// `log_y`.
struct ChartSpec {
  std::string caption, id;
  std::vector<CurveSpec> curves;
  std::string y_label;
  bool log_y = false;
  std::optional<double> y_min, y_max;
};

// A row of the summary: the last value of `key` in the records of `kind`, printed by `format`.
struct SummaryRow {
  std::string label, kind, key, format;
};

// An image each validation writes: plots/step_N_<name>.png.
struct PlotSpec {
  std::string name, caption;
};

// An audio file each validation writes: samples/step_N<suffix>.wav; `label` says what it is.
struct SampleSpec {
  std::string suffix, label;
};

// What a run of one family holds, said by the family (models' FamilyEntry::report): the report
// draws what every run has (losses and their parts, each optimizer's learning rate and gradient
// norm, throughput, a step's phases, checkpoints, config) and these, so a page shows no section
// of another family's. Default: a run whose family is not known, its own sections left out.
struct RunContents {
  std::string family;  // shown under the title; empty: not known
  std::string loss = "training loss";
  std::string validation_loss = "validation loss";
  std::vector<std::string> optimizers;  // slot order: "grad_norm" is the first's, then _<name>
  std::vector<SummaryRow> summary;
  std::vector<ChartSpec> charts;
  std::vector<PlotSpec> plots;
  std::vector<SampleSpec> samples;
  std::string note;  // said at the top of the page (why the family is not known)
};

// The report of the run in `run_dir` as one HTML document, its sections from `contents`. Throws
// tts::Error when `run_dir` is not a directory or has neither metrics.jsonl nor config.yaml (not
// a run).
std::string render_run_report(const std::string& run_dir, const RunContents& contents = {},
                              const ReportLimits& limits = {});

}  // namespace tts::report
