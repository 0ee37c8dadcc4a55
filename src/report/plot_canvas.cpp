#include "plot_canvas.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include "tts/core/error.h"

namespace tts::report::plotting {
namespace {

// Viridis, sampled at 9 points; interpolated linearly.
constexpr std::array<std::array<double, 3>, 9> kViridis{{{68, 1, 84},
                                                         {71, 44, 122},
                                                         {59, 81, 139},
                                                         {44, 113, 142},
                                                         {33, 144, 141},
                                                         {39, 173, 129},
                                                         {92, 200, 99},
                                                         {170, 220, 50},
                                                         {253, 231, 37}}};

// A sans-serif face every Debian desktop and server with fonts-dejavu-core has; Cairo's toy text
// API falls back to fontconfig's default sans when it is missing.
constexpr const char* kFont = "DejaVu Sans";

cairo_status_t append_to_string(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

uint32_t packed(Color color) {
  auto channel = [](double v) {
    return static_cast<uint32_t>(std::lround(std::clamp(v, 0.0, 1.0) * 255));
  };
  return 0xff000000u | channel(color.r) << 16 | channel(color.g) << 8 | channel(color.b);
}

}  // namespace

const std::vector<Color>& palette() {
  static const std::vector<Color> colors{
      {0.122, 0.467, 0.706}, {1.000, 0.498, 0.055}, {0.173, 0.627, 0.173}, {0.839, 0.153, 0.157},
      {0.580, 0.404, 0.741}, {0.549, 0.337, 0.294}, {0.890, 0.467, 0.761}, {0.498, 0.498, 0.498},
      {0.737, 0.741, 0.133}, {0.090, 0.745, 0.812}};
  return colors;
}

Color viridis(double t) {
  t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0) * static_cast<double>(kViridis.size() - 1);
  auto index = std::min(static_cast<size_t>(t), kViridis.size() - 2);
  double frac = t - static_cast<double>(index);
  auto mix = [&](size_t c) {
    return (kViridis[index][c] * (1 - frac) + kViridis[index + 1][c] * frac) / 255.0;
  };
  return {mix(0), mix(1), mix(2)};
}

// Ticks on an axis: a target is a handful to a few dozen (a side has at most 8192 pixels).
constexpr int kMaxTicks = 1000;

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) return {};
  if (hi <= lo) return {lo};
  double raw = (hi - lo) / std::max(target, 1);
  double power = std::pow(10.0, std::floor(std::log10(raw)));
  double step = power;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * power;
    if (step >= raw) break;
  }
  // Counted, not stepped: where the step is below the values' precision (1e300 to the next
  // double), adding it changes nothing, and a loop until the end would never end.
  const double first = std::ceil(lo / step - 1e-9) * step;
  std::vector<double> ticks;
  for (int i = 0; i < kMaxTicks; ++i) {
    const double v = first + i * step;
    if (!(v <= hi + step * 1e-9) || (!ticks.empty() && v <= ticks.back())) break;
    ticks.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
  }
  return ticks;
}

std::string tick_label(double value, double step) {
  int decimals = step > 0 ? std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9))) : 2;
  return fmt::format("{:.{}f}", value, std::min(decimals, 6));
}

Canvas::Canvas(int width, int height) : width_(width), height_(height) {
  TTS_CHECK(width > 0 && height > 0 && width <= 8192 && height <= 8192,
            "plot: a {}x{} image is outside 1..8192 pixels a side", width, height);
  surface_ = cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height);
  cr_ = cairo_create(surface_);
  TTS_CHECK(cairo_status(cr_) == CAIRO_STATUS_SUCCESS, "plot: Cairo cannot draw a {}x{} image: {}",
            width, height, cairo_status_to_string(cairo_status(cr_)));
  cairo_set_source_rgb(cr_, 1, 1, 1);
  cairo_paint(cr_);
}

Canvas::~Canvas() {
  cairo_destroy(cr_);
  cairo_surface_destroy(surface_);
}

void Canvas::set_color(Color color) { cairo_set_source_rgb(cr_, color.r, color.g, color.b); }

void Canvas::text(const std::string& text, double x, double y, double size, double ax, double ay,
                  bool bold, double angle, Color color) {
  cairo_save(cr_);
  cairo_select_font_face(cr_, kFont, CAIRO_FONT_SLANT_NORMAL,
                         bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr_, size);
  cairo_font_extents_t font;
  cairo_font_extents(cr_, &font);
  cairo_text_extents_t extents;
  cairo_text_extents(cr_, text.c_str(), &extents);
  cairo_translate(cr_, x, y);
  cairo_rotate(cr_, -angle);
  // The box is the advance width by the font's ascent + descent, so that labels of one row share
  // a baseline whatever their letters.
  double box_height = font.ascent + font.descent;
  cairo_move_to(cr_, -ax * extents.x_advance, -ay * box_height + font.ascent);
  set_color(color);
  cairo_show_text(cr_, text.c_str());
  cairo_restore(cr_);
}

double Canvas::text_width(const std::string& text, double size, bool bold) {
  cairo_save(cr_);
  cairo_select_font_face(cr_, kFont, CAIRO_FONT_SLANT_NORMAL,
                         bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr_, size);
  cairo_text_extents_t extents;
  cairo_text_extents(cr_, text.c_str(), &extents);
  cairo_restore(cr_);
  return extents.x_advance;
}

void Canvas::line(double x0, double y0, double x1, double y1, Color color, double width,
                  bool dashed) {
  cairo_save(cr_);
  set_color(color);
  cairo_set_line_width(cr_, width);
  if (dashed) {
    const double dashes[] = {5, 4};
    cairo_set_dash(cr_, dashes, 2, 0);
  }
  cairo_move_to(cr_, x0, y0);
  cairo_line_to(cr_, x1, y1);
  cairo_stroke(cr_);
  cairo_restore(cr_);
}

void Canvas::fill(const Rect& rect, Color color) {
  set_color(color);
  cairo_rectangle(cr_, rect.x, rect.y, rect.width, rect.height);
  cairo_fill(cr_);
}

void Canvas::stroke(const Rect& rect, Color color, double width) {
  cairo_save(cr_);
  set_color(color);
  cairo_set_line_width(cr_, width);
  // Half-pixel offsets keep one-pixel lines sharp.
  cairo_rectangle(cr_, std::round(rect.x) + 0.5, std::round(rect.y) + 0.5,
                  std::round(rect.width) - 1, std::round(rect.height) - 1);
  cairo_stroke(cr_);
  cairo_restore(cr_);
}

void Canvas::series(const Axes& axes, const std::vector<double>& xs, const std::vector<double>& ys,
                    Color color, double width, bool dashed, bool markers) {
  cairo_save(cr_);
  cairo_rectangle(cr_, axes.frame.x, axes.frame.y, axes.frame.width, axes.frame.height);
  cairo_clip(cr_);
  set_color(color);
  cairo_set_line_width(cr_, width);
  cairo_set_line_join(cr_, CAIRO_LINE_JOIN_ROUND);
  if (dashed) {
    const double dashes[] = {6, 4};
    cairo_set_dash(cr_, dashes, 2, 0);
  }
  bool open = false;
  size_t n = std::min(xs.size(), ys.size());
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(xs[i]) || !std::isfinite(ys[i])) {
      open = false;
      continue;
    }
    if (open) {
      cairo_line_to(cr_, axes.px(xs[i]), axes.py(ys[i]));
    } else {
      cairo_move_to(cr_, axes.px(xs[i]), axes.py(ys[i]));
      open = true;
    }
  }
  cairo_stroke(cr_);
  if (markers) {
    cairo_set_dash(cr_, nullptr, 0, 0);
    for (size_t i = 0; i < n; ++i) {
      if (!std::isfinite(xs[i]) || !std::isfinite(ys[i])) continue;
      cairo_arc(cr_, axes.px(xs[i]), axes.py(ys[i]), 3.5, 0, 2 * M_PI);
      cairo_fill(cr_);
    }
  }
  cairo_restore(cr_);
}

void Canvas::heatmap(const Rect& rect, const Matrix& values, double lo, double hi) {
  TTS_CHECK(values.rows > 0 && values.cols > 0 &&
                values.values.size() == static_cast<size_t>(values.rows) * values.cols,
            "plot: {} values do not make a {}x{} matrix", values.values.size(), values.rows,
            values.cols);
  // One image pixel per value, then scaled into the rectangle by Cairo.
  int width = values.rows;
  int height = values.cols;
  cairo_surface_t* image = cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height);
  TTS_CHECK(cairo_surface_status(image) == CAIRO_STATUS_SUCCESS,
            "plot: Cairo cannot make a {}x{} heat map: {}", width, height,
            cairo_status_to_string(cairo_surface_status(image)));
  cairo_surface_flush(image);
  unsigned char* data = cairo_image_surface_get_data(image);
  int stride = cairo_image_surface_get_stride(image);
  double range = hi > lo ? hi - lo : 1;
  for (int x = 0; x < width; ++x) {
    for (int y = 0; y < height; ++y) {
      float v = values.values[static_cast<size_t>(x) * values.cols + y];
      Color color = std::isfinite(v) ? viridis((v - lo) / range) : kMissing;
      auto* row = reinterpret_cast<uint32_t*>(data + static_cast<size_t>(height - 1 - y) * stride);
      row[x] = packed(color);
    }
  }
  cairo_surface_mark_dirty(image);
  cairo_save(cr_);
  cairo_rectangle(cr_, rect.x, rect.y, rect.width, rect.height);
  cairo_clip(cr_);
  cairo_translate(cr_, rect.x, rect.y);
  cairo_scale(cr_, rect.width / width, rect.height / height);
  cairo_set_source_surface(cr_, image, 0, 0);
  cairo_pattern_t* pattern = cairo_get_source(cr_);
  // Enlarged values stay crisp cells; shrunk ones are averaged rather than dropped.
  bool shrinking = rect.width < width || rect.height < height;
  cairo_pattern_set_filter(pattern, shrinking ? CAIRO_FILTER_GOOD : CAIRO_FILTER_NEAREST);
  cairo_pattern_set_extend(pattern, CAIRO_EXTEND_PAD);
  cairo_paint(cr_);
  cairo_restore(cr_);
  cairo_surface_destroy(image);
}

void Canvas::colorbar(const Rect& rect, double lo, double hi, const std::string& label) {
  int steps = std::max(2, static_cast<int>(rect.height));
  for (int i = 0; i < steps; ++i) {
    double t = static_cast<double>(i) / (steps - 1);
    fill({rect.x, rect.y + rect.height - (i + 1) * rect.height / steps, rect.width,
          rect.height / steps + 0.5},
         viridis(t));
  }
  stroke(rect, kBlack);
  Axes axis{rect, {0, 1}, {lo, hi > lo ? hi : lo + 1}};
  auto ticks = nice_ticks(axis.y.lo, axis.y.hi, 5);
  double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 0;
  double widest = 0;
  for (double t : ticks) {
    double y = axis.py(t);
    line(rect.x + rect.width, y, rect.x + rect.width + 4, y, kBlack);
    std::string text = tick_label(t, step);
    widest = std::max(widest, text_width(text, 11));
    this->text(text, rect.x + rect.width + 7, y, 11, 0, 0.5);
  }
  this->text(label, rect.x + rect.width + 12 + widest, rect.y + rect.height / 2, 12, 0.5, 0, false,
             M_PI / 2);
}

void Canvas::y_axis(const Axes& axes, const std::string& label) {
  auto ticks =
      nice_ticks(axes.y.lo, axes.y.hi, std::max(2, static_cast<int>(axes.frame.height / 35)));
  double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 0;
  double widest = 0;
  for (double t : ticks) {
    double y = axes.py(t);
    line(axes.frame.x - 4, y, axes.frame.x, y, kBlack);
    std::string text = tick_label(t, step);
    widest = std::max(widest, text_width(text, 11));
    this->text(text, axes.frame.x - 7, y, 11, 1, 0.5);
  }
  this->text(label, axes.frame.x - 12 - widest, axes.frame.y + axes.frame.height / 2, 12, 0.5, 1,
             false, M_PI / 2);
}

void Canvas::axes(const Axes& axes, const std::string& x_label, const std::string& y_label,
                  bool x_labels) {
  auto ticks =
      nice_ticks(axes.x.lo, axes.x.hi, std::max(2, static_cast<int>(axes.frame.width / 80)));
  double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 0;
  double bottom = axes.frame.y + axes.frame.height;
  for (double t : ticks) {
    if (!x_labels) break;
    double x = axes.px(t);
    line(x, bottom, x, bottom + 4, kBlack);
    text(tick_label(t, step), x, bottom + 6, 11, 0.5, 0);
  }
  if (!x_label.empty()) text(x_label, axes.frame.x + axes.frame.width / 2, bottom + 22, 12, 0.5, 0);
  y_axis(axes, y_label);
  stroke(axes.frame, kBlack);
}

void Canvas::x_ticks(const Axes& axes, const std::vector<double>& ticks,
                     const std::vector<std::string>& labels) {
  double bottom = axes.frame.y + axes.frame.height;
  for (size_t i = 0; i < ticks.size(); ++i) {
    double x = axes.px(ticks[i]);
    line(x, bottom, x, bottom + 4, kBlack);
    if (i < labels.size()) text(labels[i], x, bottom + 6, 11, 0.5, 0);
  }
}

void Canvas::legend(double x, double y, const std::vector<LegendEntry>& entries, double size) {
  double widest = 0;
  for (const auto& entry : entries) widest = std::max(widest, text_width(entry.label, size));
  double row = size * 1.5;
  Rect box{x, y, widest + 42, row * static_cast<double>(entries.size()) + 8};
  cairo_save(cr_);
  cairo_set_source_rgba(cr_, 1, 1, 1, 0.85);
  cairo_rectangle(cr_, box.x, box.y, box.width, box.height);
  cairo_fill(cr_);
  cairo_restore(cr_);
  stroke(box, kLightGrey);
  for (size_t i = 0; i < entries.size(); ++i) {
    double cy = y + 4 + row * (static_cast<double>(i) + 0.5);
    if (entries[i].filled) {
      fill({x + 8, cy - 5, 22, 10}, entries[i].color);
    } else {
      line(x + 8, cy, x + 30, cy, entries[i].color, 2, entries[i].dashed);
    }
    text(entries[i].label, x + 36, cy, size, 0, 0.5);
  }
}

std::string Canvas::png() {
  cairo_surface_flush(surface_);
  std::string bytes;
  cairo_status_t status = cairo_surface_write_to_png_stream(surface_, append_to_string, &bytes);
  TTS_CHECK(status == CAIRO_STATUS_SUCCESS, "plot: Cairo cannot encode the PNG: {}",
            cairo_status_to_string(status));
  return bytes;
}

}  // namespace tts::report::plotting
