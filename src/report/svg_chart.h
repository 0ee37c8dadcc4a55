// Inline SVG charts of metric series against the training step, for the run report: lines or
// stacked areas, linear or logarithmic y, round ticks, an HTML legend with each series' last
// value. Private to the report module.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tts::report {

using Points = std::vector<std::pair<double, double>>;  // (step, value), by step

struct Series {
  std::string label;
  Points points;
  bool dashed = false;
};

struct ChartOptions {
  std::string y_label;
  bool log_y = false;
  std::optional<double> y_min;
  std::optional<double> y_max;
  bool stacked = false;  // areas stacked from the first series up
};

ChartOptions linear_y(const std::string& label, std::optional<double> min = std::nullopt,
                      std::optional<double> max = std::nullopt, bool stacked = false);
ChartOptions logarithmic_y(const std::string& label);

// An inline SVG line (or stacked area) chart of `series` with its legend; `id` names the <svg>.
std::string svg_chart(const std::string& id, const std::vector<Series>& series,
                      const ChartOptions& options);

// A number as the chart's labels print it (3-4 significant digits).
std::string number(double v);

}  // namespace tts::report
