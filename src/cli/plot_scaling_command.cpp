// tts-train plot-scaling --table scaling.tsv --out scaling.png: the picture of a scaling run
// (bench/bench_scaling.sh writes the table and calls this).
#include "tts/cli/command.h"
#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/core/logging.h"
#include "tts/report/plots.h"

namespace tts::cli {
namespace {

struct PlotScalingArgs {
  std::string table;
  std::string out;
  std::string title = "Weak scaling";
};

Runner setup_plot_scaling(CLI::App& app) {
  auto args = std::make_shared<PlotScalingArgs>();
  app.add_option("--table", args->table,
                 "tab-separated table with a header row: ranks, mel_frames_per_s, step_s, "
                 "data_wait_s, forward_s, backward_s, comm_exposed_s, optimizer_s")
      ->required();
  app.add_option("--out", args->out, "the PNG to write")->required();
  app.add_option("--title", args->title, "the picture's title: config, machine, date");
  return [args]() {
    std::string text;
    try {
      text = read_file(args->table, Symlinks::kFollow);  // named by the user
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
    report::Plot plot =
        report::scaling_plot(report::parse_scaling_table(text, args->table), args->title);
    write_file_atomic(args->out, plot.png);
    log::get("bench")->info("{}: speedup, efficiency and phase times of {}", args->out,
                            args->table);
    return 0;
  };
}

}  // namespace

TTS_REGISTER_COMMAND("plot-scaling",
                     "draw speedup, efficiency and phase times of bench/bench_scaling.sh's table",
                     95, setup_plot_scaling);

}  // namespace tts::cli
