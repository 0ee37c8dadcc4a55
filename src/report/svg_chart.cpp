#include "svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "plot_canvas.h"
#include "tts/report/run_report.h"

namespace tts::report {
namespace {

std::string css_color(const plotting::Color& c) {
  return fmt::format("#{:02x}{:02x}{:02x}", static_cast<int>(std::lround(c.r * 255)),
                     static_cast<int>(std::lround(c.g * 255)),
                     static_cast<int>(std::lround(c.b * 255)));
}

// The chart's geometry and its data ranges: step to x, value to y (log10 on a log axis).
struct Frame {
  static constexpr double kWidth = 640, kHeight = 300;
  static constexpr double kLeft = 64, kRight = 24, kTop = 12, kBottom = 40;  // right: last label
  static constexpr double kPlotWidth = kWidth - kLeft - kRight;
  static constexpr double kPlotHeight = kHeight - kTop - kBottom;
  double x_lo = INFINITY, x_hi = -INFINITY, y_lo = INFINITY, y_hi = -INFINITY;
  bool log_y = false;
  double ly = 0, hy = 1;  // the y range on the axis's scale

  double ty(double v) const { return log_y ? std::log10(v) : v; }
  double px(double x) const { return kLeft + (x - x_lo) / (x_hi - x_lo) * kPlotWidth; }
  double py(double y) const { return kTop + kPlotHeight - (ty(y) - ly) / (hy - ly) * kPlotHeight; }
  bool empty() const { return !(x_lo <= x_hi); }
};

Frame frame_of(const std::vector<Series>& series, const ChartOptions& options) {
  Frame f;
  for (const auto& s : series) {
    for (const auto& [x, y] : s.points) {
      if (options.log_y && y <= 0) continue;
      f.x_lo = std::min(f.x_lo, x);
      f.x_hi = std::max(f.x_hi, x);
      f.y_lo = std::min(f.y_lo, y);
      f.y_hi = std::max(f.y_hi, y);
    }
  }
  if (f.empty()) return f;
  if (options.y_min) f.y_lo = std::min(f.y_lo, *options.y_min);
  if (options.stacked) f.y_lo = 0;
  if (options.y_max) f.y_hi = std::max(f.y_hi, *options.y_max);
  if (f.x_hi == f.x_lo) f.x_hi = f.x_lo + 1;
  f.log_y = options.log_y && f.y_lo > 0;
  f.ly = f.ty(f.y_lo);
  f.hy = f.ty(f.y_hi);
  if (f.hy <= f.ly) f.hy = f.ly + (f.log_y ? 1 : std::max(1e-9, std::abs(f.ly) * 0.1 + 1e-9));
  if (!f.log_y && !options.y_max) f.hy += (f.hy - f.ly) * 0.05;
  return f;
}

// The frame, grid lines, ticks and axis labels.
std::string axes_svg(const Frame& f, const std::string& y_label) {
  std::string svg =
      fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"frame\"/>",
                  Frame::kLeft, Frame::kTop, Frame::kPlotWidth, Frame::kPlotHeight);
  // Y ticks: powers of ten on a log axis, round numbers otherwise.
  std::vector<double> y_ticks;
  if (f.log_y) {
    for (double e = std::floor(f.ly); e <= std::ceil(f.hy); ++e) {
      for (double m : {1.0, 2.0, 5.0}) {
        double v = m * std::pow(10.0, e);
        if (f.ty(v) >= f.ly - 1e-9 && f.ty(v) <= f.hy + 1e-9 && (m == 1 || f.hy - f.ly < 1.5)) {
          y_ticks.push_back(v);
        }
      }
    }
  } else {
    y_ticks = plotting::nice_ticks(f.ly, f.hy, 5);
  }
  const double y_step = y_ticks.size() > 1 ? y_ticks[1] - y_ticks[0] : 0;
  for (double v : y_ticks) {
    svg += fmt::format(
        "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" class=\"grid\"/>"
        "<text x=\"{3}\" y=\"{2:.1f}\" class=\"tick\" text-anchor=\"end\" "
        "dominant-baseline=\"middle\">{4}</text>",
        Frame::kLeft, Frame::kLeft + Frame::kPlotWidth, f.py(v), Frame::kLeft - 5,
        f.log_y ? number(v) : plotting::tick_label(v, y_step));
  }
  const auto x_ticks = plotting::nice_ticks(f.x_lo, f.x_hi, 6);
  const double x_step = x_ticks.size() > 1 ? x_ticks[1] - x_ticks[0] : 0;
  const double bottom = Frame::kTop + Frame::kPlotHeight;
  for (double v : x_ticks) {
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" class=\"tickmark\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" class=\"tick\" text-anchor=\"middle\">{4}</text>",
        f.px(v), bottom, bottom + 4, bottom + 16, plotting::tick_label(v, x_step));
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" class=\"label\" text-anchor=\"middle\">step</text>",
                     Frame::kLeft + Frame::kPlotWidth / 2, Frame::kHeight - 6);
  svg += fmt::format(
      "<text transform=\"translate(14 {}) rotate(-90)\" class=\"label\" "
      "text-anchor=\"middle\">{}</text>",
      Frame::kTop + Frame::kPlotHeight / 2, html_escape(y_label));
  return svg;
}

// One series as a line, or as an area down to 0 when stacked.
std::string series_svg(const Frame& f, const Series& s, const std::string& color, bool stacked) {
  std::string path;
  for (const auto& [x, y] : s.points) {
    if (f.log_y && y <= 0) continue;
    path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "M" : " L", f.px(x), f.py(y));
  }
  if (path.empty()) return "";
  if (stacked) {
    path += fmt::format(" L{:.1f},{:.1f} L{:.1f},{:.1f} Z", f.px(s.points.back().first), f.py(0),
                        f.px(s.points.front().first), f.py(0));
    return fmt::format(
        "<path d=\"{}\" fill=\"{}\" fill-opacity=\"0.85\" stroke=\"none\" "
        "data-series=\"{}\"><title>{}</title></path>",
        path, color, html_escape(s.label), html_escape(s.label));
  }
  return fmt::format(
      "<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.6\"{} "
      "data-series=\"{}\"><title>{}</title></path>",
      path, color, s.dashed ? " stroke-dasharray=\"5 4\"" : "", html_escape(s.label),
      html_escape(s.label));
}

// The legend, in HTML below the chart (it wraps on narrow screens), with each series' last value
// (`original`: before stacking summed them).
std::string legend_html(const std::vector<Series>& series, const std::vector<Series>& original) {
  const auto& colors = plotting::palette();
  std::string legend = "<div class=\"legend\">";
  for (size_t i = 0; i < series.size(); ++i) {
    const Series& s = series[i];
    std::string last = s.points.empty() ? "no data"
                                        : fmt::format("{} at step {:.0f}",
                                                      number(original[i].points.back().second),
                                                      s.points.back().first);
    legend += fmt::format("<span><i style=\"background:{}\"></i>{} <small>({})</small></span>",
                          css_color(colors[i % colors.size()]), html_escape(s.label), last);
  }
  return legend + "</div>";
}

}  // namespace

std::string number(double v) {
  if (std::abs(v) >= 1e5 || (std::abs(v) < 1e-3 && v != 0)) return fmt::format("{:.3g}", v);
  return fmt::format("{:.4g}", v);
}

ChartOptions linear_y(const std::string& label, std::optional<double> min,
                      std::optional<double> max, bool stacked) {
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
  std::string svg = fmt::format(
      "<svg class=\"chart\" id=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" "
      "xmlns=\"http://www.w3.org/2000/svg\">",
      id, Frame::kWidth, Frame::kHeight);
  const Frame f = frame_of(series, options);
  if (f.empty()) {
    return svg + fmt::format(
                     "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" class=\"empty\">no data in "
                     "metrics.jsonl yet</text></svg>",
                     Frame::kWidth / 2, Frame::kHeight / 2);
  }
  svg += axes_svg(f, options.y_label);
  const auto& colors = plotting::palette();
  // Stacked areas are drawn top series first, so that each lower one covers its part.
  for (size_t k = 0; k < series.size(); ++k) {
    const size_t i = options.stacked ? series.size() - 1 - k : k;
    if (series[i].points.empty()) continue;
    svg += series_svg(f, series[i], css_color(colors[i % colors.size()]), options.stacked);
  }
  return svg + "</svg>" + legend_html(series, series_in);
}

}  // namespace tts::report
