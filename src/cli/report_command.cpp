// tts-train report RUN [--out FILE]: one self-contained HTML page about a run
// (tts/report/run_report.h), its sections those of the run's family (config.yaml's model.kind,
// through the registry: FamilyEntry::report).
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tts/cli/command.h"
#include "tts/core/fs.h"
#include "tts/core/logging.h"
#include "tts/models/registry.h"
#include "tts/report/run_report.h"

namespace tts::cli {
namespace {
namespace fs = std::filesystem;

// What the run's family shows; a run whose config.yaml cannot be read says why on the page.
report::RunContents contents_of(const fs::path& run, const report::ReportLimits& limits) {
  const fs::path path = run / "config.yaml";
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(path, ec);
  std::string why;
  if (!fs::is_regular_file(status)) {
    why = "not a regular file";
  } else if (fs::file_size(path, ec) > limits.config_bytes) {
    why = "larger than the report reads";
  } else {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    try {
      const config::Config config = config::parse_config(text.str(), path.string());
      return models::family(config.model.kind).report;
    } catch (const Error& error) {
      why = error.what();
    }
  }
  report::RunContents unknown;
  unknown.note = fmt::format(
      "the run's family is not known (config.yaml: {}): only the sections every run has are shown",
      why);
  log::get("report")->warn("{}", unknown.note);
  return unknown;
}

Runner setup_report(CLI::App& app) {
  auto run = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  app.add_option("run", *run, "the run directory (train --out RUN)")->required();
  app.add_option("--out", *out, "the HTML file to write (default: RUN/report.html)");
  app.footer(
      "One HTML file with everything embedded (plots, audio, curves as SVG; no network), to copy "
      "off a cluster and open in any browser: config, loss curves and each optimizer's gradient "
      "norm and learning rate, the run's family's own validation metrics (config.yaml's "
      "model.kind says the family), throughput and phase times, the latest validation's plots "
      "and audio, the checkpoints.");
  return [run, out]() {
    std::string path = out->empty() ? (fs::path(*run) / "report.html").string() : *out;
    const report::ReportLimits limits;
    std::error_code ec;
    const report::RunContents contents =
        fs::is_directory(*run, ec) ? contents_of(*run, limits) : report::RunContents{};
    std::string html = report::render_run_report(*run, contents, limits);
    write_file_atomic(path, html);
    log::get("report")->info("{}: {:.1f} MB, open it in a browser", path,
                             static_cast<double>(html.size()) / 1e6);
    return 0;
  };
}

}  // namespace

TTS_REGISTER_COMMAND("report", "one self-contained HTML page about a run, to open in a browser", 35,
                     setup_report);

}  // namespace tts::cli
