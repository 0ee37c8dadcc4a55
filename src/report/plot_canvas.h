// The drawing primitives behind tts/report/plots.h, on Cairo: a canvas that encodes itself as PNG,
// text, axes with ticks, heat maps, colour bars, lines and legends. Private to src/train: Cairo's
// header stays out of include/.
#pragma once

#include <cairo.h>

#include <string>
#include <vector>

#include "tts/report/plots.h"

namespace tts::report::plotting {

struct Color {
  double r = 0;
  double g = 0;
  double b = 0;
};

inline constexpr Color kBlack{0, 0, 0};
inline constexpr Color kGrey{0.5, 0.5, 0.5};
inline constexpr Color kLightGrey{0.88, 0.88, 0.88};
// Where a value is not finite (NaN, infinity) in a heat map.
inline constexpr Color kMissing{0.75, 0.75, 0.75};
// Series colours (matplotlib's tab10, the palette engineers already read).
const std::vector<Color>& palette();

// Viridis at t in [0, 1] (clamped): perceptually uniform and readable in grey scale.
Color viridis(double t);

// Round tick values (1, 2 or 5 times a power of ten) covering [lo, hi], about `target` of them,
// increasing, and never more than a thousand, however [lo, hi] rounds.
std::vector<double> nice_ticks(double lo, double hi, int target);
// A tick's label with as many decimals as the tick spacing `step` needs.
std::string tick_label(double value, double step);

// A linear map from [lo, hi] to pixels [p0, p1].
struct Scale {
  double lo = 0;
  double hi = 1;
  double to_pixel(double value, double p0, double p1) const {
    return p0 + (value - lo) / (hi > lo ? hi - lo : 1) * (p1 - p0);
  }
};

// A plotting area: `frame` in pixels, x growing right, y growing up.
struct Axes {
  Rect frame;
  Scale x;
  Scale y;
  double px(double value) const { return x.to_pixel(value, frame.x, frame.x + frame.width); }
  double py(double value) const { return y.to_pixel(value, frame.y + frame.height, frame.y); }
};

struct LegendEntry {
  std::string label;
  Color color;
  bool dashed = false;
  bool filled = false;  // a swatch (bars, areas) rather than a line
};

class Canvas {
 public:
  // A white RGB image.
  Canvas(int width, int height);
  ~Canvas();
  Canvas(const Canvas&) = delete;
  Canvas& operator=(const Canvas&) = delete;

  int width() const { return width_; }
  int height() const { return height_; }

  // Text whose box is anchored at (x, y): `ax`, `ay` are the fractions of its width and height
  // left of and above the point (0.5, 0.5 centres it). `angle` in radians, counter-clockwise.
  void text(const std::string& text, double x, double y, double size, double ax = 0, double ay = 0,
            bool bold = false, double angle = 0, Color color = kBlack);
  double text_width(const std::string& text, double size, bool bold = false);
  void line(double x0, double y0, double x1, double y1, Color color, double width = 1,
            bool dashed = false);
  void fill(const Rect& rect, Color color);
  void stroke(const Rect& rect, Color color, double width = 1);
  // A polyline through the points of `xs`, `ys` on `axes`, clipped to its frame; a non-finite
  // value breaks the line.
  void series(const Axes& axes, const std::vector<double>& xs, const std::vector<double>& ys,
              Color color, double width = 1.5, bool dashed = false, bool markers = false);

  // `values` [x, y] drawn with x to the right and y upwards (row 0 of each column at the
  // bottom), colours from viridis over [lo, hi], into `rect`.
  void heatmap(const Rect& rect, const Matrix& values, double lo, double hi);
  // A vertical colour bar over [lo, hi] (low at the bottom) with ticks and a label on its right.
  void colorbar(const Rect& rect, double lo, double hi, const std::string& label);
  // The frame of `axes`, ticks with their labels, axis labels; without `x_labels` no x ticks
  // (the caller places them: x_ticks).
  void axes(const Axes& axes, const std::string& x_label, const std::string& y_label,
            bool x_labels = true);
  // Ticks at `ticks` with these `labels` on the x axis (categories, rank counts).
  void x_ticks(const Axes& axes, const std::vector<double>& ticks,
               const std::vector<std::string>& labels);
  // A boxed legend with its top-left corner at (x, y).
  void legend(double x, double y, const std::vector<LegendEntry>& entries, double size = 11);

  std::string png();

 private:
  void set_color(Color color);
  void y_axis(const Axes& axes, const std::string& label);

  int width_;
  int height_;
  cairo_surface_t* surface_ = nullptr;
  cairo_t* cr_ = nullptr;
};

}  // namespace tts::report::plotting
