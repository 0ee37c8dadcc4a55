// tts-train report RUN [--out FILE]: one self-contained HTML page about a run
// (tts/report/run_report.h).
#include <filesystem>

#include "tts/cli/command.h"
#include "tts/core/fs.h"
#include "tts/core/logging.h"
#include "tts/report/run_report.h"

namespace tts::cli {
namespace {

Runner setup_report(CLI::App& app) {
  auto run = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  app.add_option("run", *run, "the run directory (train --out RUN)")->required();
  app.add_option("--out", *out, "the HTML file to write (default: RUN/report.html)");
  app.footer(
      "One HTML file with everything embedded (plots, audio, curves as SVG; no network), to copy "
      "off a cluster and open in any browser: config, loss and alignment curves, throughput and "
      "phase times, the latest validation's plots and audio, the checkpoints.");
  return [run, out]() {
    std::string path = out->empty() ? (std::filesystem::path(*run) / "report.html").string() : *out;
    std::string html = report::render_run_report(*run);
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
