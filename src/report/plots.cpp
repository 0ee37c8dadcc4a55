#include "tts/report/plots.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "plot_canvas.h"
#include "tts/core/error.h"

namespace tts::report {
namespace {

using plotting::Axes;
using plotting::Canvas;
using plotting::Color;
using plotting::LegendEntry;
using plotting::Scale;

void check_matrix(const Matrix& m, const std::string& what) {
  TTS_CHECK(m.rows > 0 && m.cols > 0 && m.values.size() == static_cast<size_t>(m.rows) * m.cols,
            "{}: expected a non-empty matrix, found {}x{} with {} values", what, m.rows, m.cols,
            m.values.size());
}

// Smallest and largest finite values of the matrices; (0, 1) when there are none.
std::pair<double, double> finite_range(const std::vector<const Matrix*>& matrices) {
  double lo = INFINITY;
  double hi = -INFINITY;
  for (const Matrix* m : matrices) {
    for (float v : m->values) {
      if (!std::isfinite(v)) continue;
      lo = std::min(lo, static_cast<double>(v));
      hi = std::max(hi, static_cast<double>(v));
    }
  }
  if (lo > hi) return {0, 1};
  if (lo == hi) return {lo, lo + 1};
  return {lo, hi};
}

std::string title_of(int64_t step, const std::string& utterance, const std::string& what) {
  std::vector<std::string> parts;
  if (step >= 0) parts.push_back(fmt::format("step {}", step));
  if (!utterance.empty()) parts.push_back(utterance);
  if (!what.empty()) parts.push_back(what);
  std::string title;
  for (const auto& part : parts) title += (title.empty() ? "" : "  \u00b7  ") + part;
  return title;
}

// Draws the scaling plot's speedup panel, measured against linear; returns its frame.
Rect draw_speedup(Canvas& canvas, const std::vector<double>& ranks,
                  const std::vector<double>& speedup, const std::vector<double>& ideal,
                  const Scale& rank_scale, const std::vector<std::string>& rank_labels,
                  const Color& measured) {
  double top_speedup = std::max(*std::max_element(speedup.begin(), speedup.end()),
                                *std::max_element(ideal.begin(), ideal.end()));
  Axes speed{{70, 60, 320, 350}, rank_scale, {0, top_speedup * 1.1}};
  canvas.text("speedup (mel frames/s against the first row)", speed.frame.x, 38, 13);
  canvas.series(speed, ranks, ideal, plotting::kGrey, 1.5, true);
  canvas.series(speed, ranks, speedup, measured, 2, false, true);
  canvas.axes(speed, "", "speedup", false);
  canvas.x_ticks(speed, ranks, rank_labels);
  canvas.text("ranks", speed.frame.x + speed.frame.width / 2,
              speed.frame.y + speed.frame.height + 22, 12, 0.5);
  canvas.legend(speed.frame.x + 8, speed.frame.y + 8,
                {{"measured", measured}, {"ideal (linear)", plotting::kGrey, true}});
  return speed.frame;
}

// Draws the scaling plot's efficiency panel, each point labelled; returns its frame.
Rect draw_efficiency(Canvas& canvas, const std::vector<double>& ranks,
                     const std::vector<double>& efficiency, const Scale& rank_scale,
                     const std::vector<std::string>& rank_labels, const Color& measured) {
  double top_efficiency =
      std::max(1.15, *std::max_element(efficiency.begin(), efficiency.end()) * 1.1);
  Axes eff{{470, 60, 320, 350}, rank_scale, {0, top_efficiency}};
  canvas.text("scaling efficiency (speedup / ranks)", eff.frame.x, 38, 13);
  canvas.line(eff.frame.x, eff.py(1), eff.frame.x + eff.frame.width, eff.py(1), plotting::kGrey,
              1.5, true);
  canvas.series(eff, ranks, efficiency, measured, 2, false, true);
  canvas.axes(eff, "", "efficiency", false);
  canvas.x_ticks(eff, ranks, rank_labels);
  canvas.text("ranks", eff.frame.x + eff.frame.width / 2, eff.frame.y + eff.frame.height + 22, 12,
              0.5);
  for (size_t i = 0; i < ranks.size(); ++i) {
    canvas.text(fmt::format("{:.2f}", efficiency[i]), eff.px(ranks[i]), eff.py(efficiency[i]) - 8,
                10, 0.5, 1);
  }
  return eff.frame;
}

// Draws the scaling plot's panel of the time of a step by phase; returns its frame.
Rect draw_phase_bars(Canvas& canvas, const std::vector<ScalingPoint>& points,
                     const std::vector<std::string>& rank_labels) {
  // Stacked bars: one per rank count, the phases of a mean step from the bottom up.
  struct Phase {
    const char* label;
    double ScalingPoint::*field;
  };
  const Phase phases[] = {{"data wait", &ScalingPoint::data_s},
                          {"forward", &ScalingPoint::forward_s},
                          {"backward", &ScalingPoint::backward_s},
                          {"exposed comm", &ScalingPoint::comm_s},
                          {"optimizer", &ScalingPoint::optimizer_s}};
  double top_step = 0;
  for (const auto& p : points) {
    double sum = 0;
    for (const auto& phase : phases) sum += p.*phase.field;
    top_step = std::max({top_step, sum, p.step_s});
  }
  const double n = static_cast<double>(points.size());
  Axes bars{{880, 60, 260, 350}, {0, n}, {0, top_step > 0 ? top_step * 1.1 : 1}};
  canvas.text("time of a step, by phase", bars.frame.x, 38, 13);
  std::vector<LegendEntry> legend;
  std::vector<double> centres;
  for (size_t i = 0; i < points.size(); ++i) {
    const ScalingPoint& p = points[i];
    double x0 = bars.px(i + 0.2);
    double x1 = bars.px(i + 0.8);
    double bottom = 0;
    for (size_t k = 0; k < std::size(phases); ++k) {
      double value = std::max(0.0, p.*phases[k].field);
      Color color = plotting::palette()[k];
      canvas.fill({x0, bars.py(bottom + value), x1 - x0, bars.py(bottom) - bars.py(bottom + value)},
                  color);
      bottom += value;
    }
    // What the phase timers do not cover (synchronization, bookkeeping) on top, in grey.
    if (p.step_s > bottom) {
      canvas.fill({x0, bars.py(p.step_s), x1 - x0, bars.py(bottom) - bars.py(p.step_s)},
                  plotting::kLightGrey);
    }
    centres.push_back(i + 0.5);
  }
  for (size_t k = 0; k < std::size(phases); ++k)
    legend.push_back({phases[k].label, plotting::palette()[k], false, true});
  legend.push_back({"other", plotting::kLightGrey, false, true});
  canvas.axes(bars, "", "seconds per step", false);
  canvas.x_ticks(bars, centres, rank_labels);
  canvas.text("ranks", bars.frame.x + bars.frame.width / 2, bars.frame.y + bars.frame.height + 22,
              12, 0.5);
  canvas.legend(bars.frame.x + bars.frame.width + 12, bars.frame.y, legend);
  return bars.frame;
}

}  // namespace

Plot alignment_plot(const AlignmentPlotInput& input) {
  check_matrix(input.weights, "alignment plot");
  Plot plot;
  plot.width = 900;
  plot.height = 540;
  Canvas canvas(plot.width, plot.height);
  std::string what = input.kind.empty() ? "alignment" : input.kind + " alignment";
  canvas.text(title_of(input.step, input.utterance, what), plot.width / 2.0, 12, 15, 0.5, 0, true);
  if (input.diagonal_score >= 0 || input.focus_rate >= 0) {
    std::string scores;
    if (input.diagonal_score >= 0)
      scores += fmt::format("diagonal score {:.3f}", input.diagonal_score);
    if (input.focus_rate >= 0) {
      scores += fmt::format("{}focus rate {:.3f}", scores.empty() ? "" : "    ", input.focus_rate);
    }
    canvas.text(scores, plot.width / 2.0, 34, 13, 0.5, 0);
  }
  const Matrix& w = input.weights;
  Axes axes{{80, 62, 690, 410}, {0, static_cast<double>(w.rows)}, {0, static_cast<double>(w.cols)}};
  auto [lo, hi] = finite_range({&w});
  // Weights are probabilities: the scale starts at 0, so a blurred alignment reads as dim.
  lo = 0;
  if (hi <= lo) hi = 1;
  canvas.heatmap(axes.frame, w, lo, hi);
  canvas.axes(axes, "decoder timestep", "encoder timestep");
  Rect bar{axes.frame.x + axes.frame.width + 20, axes.frame.y, 18, axes.frame.height};
  canvas.colorbar(bar, lo, hi, "attention weight");
  plot.regions = {{"heatmap", axes.frame}, {"colorbar", bar}};
  plot.png = canvas.png();
  return plot;
}

Plot mel_plot(const MelPlotInput& input) {
  TTS_CHECK(!input.panels.empty(), "mel plot: no spectrogram to draw");
  std::vector<const Matrix*> matrices;
  int frames = 0;
  for (const auto& panel : input.panels) {
    check_matrix(panel.frames, "mel plot (" + panel.title + ")");
    matrices.push_back(&panel.frames);
    frames = std::max(frames, panel.frames.rows);
  }
  for (const auto& curve : input.stop)
    frames = std::max(frames, static_cast<int>(curve.values.size()));
  const double seconds = input.seconds_per_frame > 0 ? input.seconds_per_frame : 1;
  const std::string time_label = input.seconds_per_frame > 0 ? "time (s)" : "frame";
  const double duration = frames * seconds;

  const double left = 80;
  const double width = 770;
  const double top = 44;
  const double panel_height = 150;
  const double gap = 46;
  const double stop_height = input.stop.empty() ? 0 : 120;
  Plot plot;
  plot.width = 1000;
  plot.height = static_cast<int>(top + input.panels.size() * (panel_height + gap) +
                                 (input.stop.empty() ? 0 : stop_height + gap) + 12);
  Canvas canvas(plot.width, plot.height);
  canvas.text(title_of(input.step, input.utterance, "mel spectrograms"), plot.width / 2.0, 12, 15,
              0.5, 0, true);
  auto [lo, hi] = finite_range(matrices);
  double y = top;
  for (size_t i = 0; i < input.panels.size(); ++i) {
    const MelPanel& panel = input.panels[i];
    y += 20;
    canvas.text(fmt::format("{}  ({} frames)", panel.title, panel.frames.rows), left, y - 18, 13);
    Axes axes{
        {left, y, width, panel_height}, {0, duration}, {0, static_cast<double>(panel.frames.cols)}};
    canvas.fill(axes.frame, plotting::kLightGrey);  // beyond this panel's last frame
    Rect drawn = axes.frame;
    drawn.width = width * panel.frames.rows / frames;
    canvas.heatmap(drawn, panel.frames, lo, hi);
    canvas.axes(axes, i + 1 == input.panels.size() && input.stop.empty() ? time_label : "",
                "mel bin");
    plot.regions[fmt::format("panel{}", i)] = drawn;
    y += panel_height + gap - 20;
  }
  // The colour bar spans the panels, from the first one's top to the last one's bottom.
  const Rect& last = plot.regions[fmt::format("panel{}", input.panels.size() - 1)];
  Rect bar{left + width + 20, top + 20, 18, last.y + last.height - top - 20};
  canvas.colorbar(bar, lo, hi, "log mel magnitude");
  plot.regions["colorbar"] = bar;

  if (!input.stop.empty()) {
    y += 20;
    canvas.text("stop token", left, y - 18, 13);
    Axes axes{{left, y, width, stop_height}, {0, duration}, {-0.05, 1.05}};
    canvas.line(axes.frame.x, axes.py(input.stop_threshold), axes.frame.x + axes.frame.width,
                axes.py(input.stop_threshold), plotting::kGrey, 1, true);
    std::vector<LegendEntry> legend;
    for (size_t i = 0; i < input.stop.size(); ++i) {
      const StopCurve& curve = input.stop[i];
      std::vector<double> xs(curve.values.size());
      std::vector<double> ys(curve.values.begin(), curve.values.end());
      for (size_t f = 0; f < xs.size(); ++f) xs[f] = (static_cast<double>(f) + 0.5) * seconds;
      Color color = plotting::palette()[i % plotting::palette().size()];
      canvas.series(axes, xs, ys, color, 1.6, curve.dashed);
      legend.push_back({curve.label, color, curve.dashed});
    }
    legend.push_back(
        {fmt::format("threshold {:.2f}", input.stop_threshold), plotting::kGrey, true});
    canvas.axes(axes, time_label, "probability");
    canvas.legend(axes.frame.x + 8, axes.frame.y + 8, legend, 10);
    plot.regions["stop"] = axes.frame;
  }
  plot.png = canvas.png();
  return plot;
}

Plot scaling_plot(const std::vector<ScalingPoint>& points, const std::string& title) {
  TTS_CHECK(!points.empty(), "scaling plot: no rank counts to draw");
  const ScalingPoint& base = points.front();
  TTS_CHECK(base.mel_frames_per_s > 0 && base.ranks > 0,
            "scaling plot: the first row ({} ranks) has no throughput to compare against",
            base.ranks);
  int max_ranks = 0;
  std::vector<double> ranks;
  std::vector<double> speedup;
  std::vector<double> efficiency;
  std::vector<double> ideal;
  for (const auto& p : points) {
    max_ranks = std::max(max_ranks, p.ranks);
    ranks.push_back(p.ranks);
    speedup.push_back(p.mel_frames_per_s / base.mel_frames_per_s);
    efficiency.push_back(speedup.back() * base.ranks / p.ranks);
    ideal.push_back(static_cast<double>(p.ranks) / base.ranks);
  }
  Plot plot;
  plot.width = 1320;
  plot.height = 480;
  Canvas canvas(plot.width, plot.height);
  canvas.text(title, plot.width / 2.0, 12, 14, 0.5, 0, true);
  std::vector<std::string> rank_labels;
  for (double r : ranks) rank_labels.push_back(fmt::format("{:.0f}", r));
  const double x_pad = std::max(0.5, 0.08 * max_ranks);
  const Scale rank_scale{std::max(0.0, ranks.front() - x_pad), max_ranks + x_pad};
  const Color measured = plotting::palette()[0];

  const Rect speed = draw_speedup(canvas, ranks, speedup, ideal, rank_scale, rank_labels, measured);
  const Rect eff = draw_efficiency(canvas, ranks, efficiency, rank_scale, rank_labels, measured);
  const Rect bars = draw_phase_bars(canvas, points, rank_labels);
  plot.regions = {{"speedup", speed}, {"efficiency", eff}, {"phases", bars}};
  plot.png = canvas.png();
  return plot;
}

std::vector<ScalingPoint> parse_scaling_table(const std::string& text, const std::string& source) {
  auto split = [](const std::string& line) {
    std::vector<std::string> cells;
    std::stringstream stream(line);
    for (std::string cell; std::getline(stream, cell, '\t');) cells.push_back(cell);
    return cells;
  };
  std::stringstream lines(text);
  std::string header_line;
  TTS_CHECK(std::getline(lines, header_line), "{}: empty; expected a header row (ranks, ...)",
            source);
  std::vector<std::string> header = split(header_line);
  const std::vector<std::string> needed{"ranks",          "mel_frames_per_s", "step_s",
                                        "data_wait_s",    "forward_s",        "backward_s",
                                        "comm_exposed_s", "optimizer_s"};
  std::vector<size_t> column(needed.size());
  for (size_t i = 0; i < needed.size(); ++i) {
    auto it = std::find(header.begin(), header.end(), needed[i]);
    TTS_CHECK(it != header.end(),
              "{}: line 1 has no column '{}'; expected tab-separated columns {} (as "
              "bench/bench_scaling.sh writes)",
              source, needed[i], fmt::join(needed, ", "));
    column[i] = static_cast<size_t>(it - header.begin());
  }
  std::vector<ScalingPoint> points;
  int number = 1;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    if (line.empty()) continue;
    std::vector<std::string> cells = split(line);
    double values[8];
    for (size_t i = 0; i < needed.size(); ++i) {
      const std::string cell = column[i] < cells.size() ? cells[column[i]] : "";
      char* end = nullptr;
      values[i] = std::strtod(cell.c_str(), &end);
      TTS_CHECK(!cell.empty() && *end == '\0' && std::isfinite(values[i]) && values[i] >= 0,
                "{}: line {}, column {}: expected a number >= 0, found '{}'", source, number,
                needed[i], cell);
    }
    TTS_CHECK(values[0] >= 1 && values[0] == std::floor(values[0]),
              "{}: line {}: ranks must be a whole number >= 1, found {}", source, number,
              values[0]);
    points.push_back({static_cast<int>(values[0]), values[1], values[2], values[3], values[4],
                      values[5], values[6], values[7]});
  }
  TTS_CHECK(!points.empty(), "{}: no rows after the header", source);
  return points;
}

}  // namespace tts::report
