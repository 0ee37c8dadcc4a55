// The plots' content, read back from their pixels: sizes, where the heat map and colour bar are,
// the colours of known values, one colour scale across mel panels, text drawn, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/formats/png.h"
#include "tts/report/plots.h"

using tts::formats::decode_png;
using tts::formats::RgbImage;
using tts::report::Matrix;
using tts::report::Plot;
using tts::report::Rect;

namespace {

const std::vector<uint8_t> kViridisLow{68, 1, 84};
const std::vector<uint8_t> kViridisHigh{253, 231, 37};

// |a - b| <= tolerance per channel.
bool near(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, int tolerance = 6) {
  for (size_t c = 0; c < 3; ++c) {
    if (std::abs(static_cast<int>(a[c]) - static_cast<int>(b[c])) > tolerance) return false;
  }
  return true;
}

std::string rgb(const std::vector<uint8_t>& p) {
  return std::to_string(p[0]) + "," + std::to_string(p[1]) + "," + std::to_string(p[2]);
}

// The pixel at (fx, fy) of `rect`, fractions of its width and height from its top left.
std::vector<uint8_t> inside(const RgbImage& image, const Rect& rect, double fx, double fy) {
  return image.at(static_cast<int>(rect.x + fx * rect.width),
                  static_cast<int>(rect.y + fy * rect.height));
}

// Pixels of `rect` darker than mid grey: text, ticks and lines.
int dark_pixels(const RgbImage& image, const Rect& rect) {
  int count = 0;
  for (int y = static_cast<int>(rect.y); y < static_cast<int>(rect.y + rect.height); ++y) {
    for (int x = static_cast<int>(rect.x); x < static_cast<int>(rect.x + rect.width); ++x) {
      auto p = image.at(x, y);
      count += p[0] + p[1] + p[2] < 3 * 100;
    }
  }
  return count;
}

// An identity-like alignment: decoder step i attends encoder step i * cols / rows.
Matrix diagonal(int rows, int cols) {
  Matrix m{std::vector<float>(static_cast<size_t>(rows) * cols, 0.0f), rows, cols};
  for (int i = 0; i < rows; ++i) m.values[static_cast<size_t>(i) * cols + i * cols / rows] = 1.0f;
  return m;
}

// Keeps a plot in the test's scratch folder, to look at.
void keep(const Plot& plot, const std::string& name) {
  std::filesystem::create_directories(TTS_TEST_TMP_DIR);
  tts::write_file_atomic(std::string(TTS_TEST_TMP_DIR) + "/" + name, plot.png);
}

}  // namespace

TEST(AlignmentPlot, HasItsSizeAHeatMapWithRowZeroAtTheBottomAndAColourBar) {
  Plot plot = tts::report::alignment_plot(
      {diagonal(4, 4), 1200, "LJ001-0001", "teacher-forced", 0.625, 0.5});
  keep(plot, "alignment.png");
  RgbImage image = decode_png(plot.png);
  EXPECT_EQ(image.width, plot.width);
  EXPECT_EQ(image.height, plot.height);
  EXPECT_EQ(tts::formats::png_dimensions(plot.png), std::make_pair(plot.width, plot.height));
  ASSERT_TRUE(plot.regions.count("heatmap") && plot.regions.count("colorbar"));
  const Rect heat = plot.regions.at("heatmap");
  // 4x4 cells: decoder step 0 attends encoder step 0, drawn at the bottom left, step 3 at the
  // top right; the other cells are 0, the low end of the scale.
  EXPECT_TRUE(near(inside(image, heat, 0.125, 0.875), kViridisHigh))
      << rgb(inside(image, heat, 0.125, 0.875));
  EXPECT_TRUE(near(inside(image, heat, 0.875, 0.125), kViridisHigh));
  EXPECT_TRUE(near(inside(image, heat, 0.125, 0.125), kViridisLow))
      << rgb(inside(image, heat, 0.125, 0.125));
  EXPECT_TRUE(near(inside(image, heat, 0.625, 0.875), kViridisLow));

  // The colour bar runs from the scale's low colour at the bottom to its high colour at the top,
  // brighter all the way up.
  const Rect bar = plot.regions.at("colorbar");
  auto top = image.at(static_cast<int>(bar.x + bar.width / 2), static_cast<int>(bar.y) + 2);
  auto bottom =
      image.at(static_cast<int>(bar.x + bar.width / 2), static_cast<int>(bar.y + bar.height) - 3);
  EXPECT_TRUE(near(top, kViridisHigh, 10)) << rgb(top);
  EXPECT_TRUE(near(bottom, kViridisLow, 10)) << rgb(bottom);
  int previous = -1;
  for (double fy = 0.95; fy > 0.04; fy -= 0.1) {
    int green = inside(image, bar, 0.5, fy)[1];
    EXPECT_GT(green, previous) << "at " << fy;
    previous = green;
  }

  // Text: the title above the heat map, tick labels and axis names left of and below it, the
  // colour bar's ticks and label right of it.
  EXPECT_GT(dark_pixels(image, {0, 0, static_cast<double>(plot.width), heat.y - 2}), 300);
  EXPECT_GT(dark_pixels(image, {0, heat.y, heat.x - 6, heat.height}), 100);
  EXPECT_GT(dark_pixels(image, {heat.x, heat.y + heat.height + 6, heat.width,
                                plot.height - heat.y - heat.height - 6}),
            100);
  EXPECT_GT(dark_pixels(image, {bar.x + bar.width + 2, bar.y, plot.width - bar.x - bar.width - 2,
                                bar.height}),
            100);
}

TEST(AlignmentPlot, DrawsValuesThatAreNotFiniteInGrey) {
  tts::report::AlignmentPlotInput input;
  input.weights = {{0.0f, NAN, 1.0f, 0.5f}, 2, 2};
  Plot plot = tts::report::alignment_plot(input);
  RgbImage image = decode_png(plot.png);
  // Decoder step 0, encoder step 1: the left column's top cell.
  auto pixel = inside(image, plot.regions.at("heatmap"), 0.25, 0.25);
  EXPECT_TRUE(near(pixel, {191, 191, 191}, 2)) << rgb(pixel);
}

TEST(AlignmentPlot, RefusesAnEmptyMatrixSayingSo) {
  try {
    tts::report::alignment_plot(tts::report::AlignmentPlotInput{});
    FAIL() << "no error";
  } catch (const tts::Error& e) {
    EXPECT_NE(std::string(e.what()).find("expected a non-empty matrix"), std::string::npos)
        << e.what();
  }
}

TEST(MelPlot, StacksPanelsOnOneColourScaleAndOneTimeAxisWithTheStopToken) {
  // Three panels of 8 mel bins: the target at the scale's low end, the teacher-forced prediction
  // at its high end, a free-running one half as long in between.
  auto filled = [](int frames, float value) {
    return Matrix{std::vector<float>(static_cast<size_t>(frames) * 8, value), frames, 8};
  };
  tts::report::MelPlotInput input;
  input.step = 600;
  input.utterance = "LJ001-0002";
  input.seconds_per_frame = 256.0 / 22050;
  input.panels = {{"target", filled(40, -4)},
                  {"teacher-forced prediction", filled(40, 2)},
                  {"free-running prediction", filled(20, -1)}};
  std::vector<float> target(40, 0.0f);
  target.back() = 1;
  input.stop = {{"target", target, true}, {"teacher-forced", std::vector<float>(40, 0.25f)}};
  Plot plot = tts::report::mel_plot(input);
  keep(plot, "mel.png");
  RgbImage image = decode_png(plot.png);
  EXPECT_EQ(image.width, plot.width);
  EXPECT_EQ(image.height, plot.height);
  for (const char* name : {"panel0", "panel1", "panel2", "colorbar", "stop"}) {
    ASSERT_TRUE(plot.regions.count(name)) << name;
  }
  const Rect p0 = plot.regions.at("panel0");
  const Rect p1 = plot.regions.at("panel1");
  const Rect p2 = plot.regions.at("panel2");
  EXPECT_LT(p0.y + p0.height, p1.y);
  EXPECT_LT(p1.y + p1.height, p2.y);
  EXPECT_LT(p2.y + p2.height, plot.regions.at("stop").y);
  EXPECT_DOUBLE_EQ(p2.width, p0.width / 2);  // half the frames, half the time axis
  EXPECT_TRUE(near(inside(image, p0, 0.5, 0.5), kViridisLow)) << rgb(inside(image, p0, 0.5, 0.5));
  EXPECT_TRUE(near(inside(image, p1, 0.5, 0.5), kViridisHigh)) << rgb(inside(image, p1, 0.5, 0.5));
  // -1 is half way from -4 to 2: viridis' middle (33, 144, 141).
  EXPECT_TRUE(near(inside(image, p2, 0.5, 0.5), {33, 144, 141}, 10))
      << rgb(inside(image, p2, 0.5, 0.5));
  // Beyond the free-running panel's last frame: the light grey background, not data.
  auto beyond = image.at(static_cast<int>(p2.x + p2.width * 1.5), static_cast<int>(p2.y + 10));
  EXPECT_TRUE(near(beyond, {224, 224, 224}, 2)) << rgb(beyond);

  // The teacher-forced stop probability (0.25, the second series colour) is a line across the
  // stop panel at a quarter of its height from the bottom of the [-0.05, 1.05] range.
  const Rect stop = plot.regions.at("stop");
  int y = static_cast<int>(stop.y + stop.height * (1.05 - 0.25) / 1.1);
  bool orange = false;
  for (int dy = -2; dy <= 2; ++dy) {
    orange |=
        near(image.at(static_cast<int>(stop.x + stop.width * 0.6), y + dy), {255, 127, 14}, 30);
  }
  EXPECT_TRUE(orange);
}

TEST(MelPlot, WithoutStopCurvesHasNoStopPanelAndIsShorter) {
  tts::report::MelPlotInput input;
  input.panels = {{"synthesized", Matrix{std::vector<float>(30 * 8, 1.0f), 30, 8}}};
  Plot one = tts::report::mel_plot(input);
  EXPECT_FALSE(one.regions.count("stop"));
  input.panels.push_back(input.panels[0]);
  Plot two = tts::report::mel_plot(input);
  EXPECT_GT(two.height, one.height);
  EXPECT_EQ(decode_png(two.png).height, two.height);
}

TEST(ScalingPlot, DrawsSpeedupEfficiencyAndPhaseBars) {
  std::vector<tts::report::ScalingPoint> points{{1, 1000, 0.5, 0.05, 0.2, 0.2, 0.0, 0.05},
                                                {2, 1800, 0.55, 0.05, 0.2, 0.2, 0.05, 0.05}};
  Plot plot = tts::report::scaling_plot(points, "weak scaling");
  keep(plot, "scaling.png");
  RgbImage image = decode_png(plot.png);
  EXPECT_EQ(image.width, plot.width);
  for (const char* name : {"speedup", "efficiency", "phases"})
    ASSERT_TRUE(plot.regions.count(name));
  // The phase bars: forward (second colour) takes four times the height of data wait (first).
  const Rect bars = plot.regions.at("phases");
  auto count = [&](const std::vector<uint8_t>& color) {
    int n = 0;
    for (int y = static_cast<int>(bars.y); y < static_cast<int>(bars.y + bars.height); ++y) {
      n += near(image.at(static_cast<int>(bars.x + bars.width * 0.25), y), color, 3);
    }
    return n;
  };
  int data = count({31, 119, 180});
  int forward = count({255, 127, 14});
  EXPECT_GT(data, 5);
  EXPECT_NEAR(static_cast<double>(forward) / data, 4.0, 0.5);
  EXPECT_THROW(tts::report::scaling_plot({}, "none"), tts::Error);
}

TEST(ScalingTable, ReadsColumnsByNameAndSaysWhereAValueIsWrong) {
  auto points = tts::report::parse_scaling_table(
      "ranks\tglobal_batch\tmel_frames_per_s\tstep_s\tdata_wait_s\tforward_s\tbackward_s\t"
      "comm_exposed_s\toptimizer_s\n"
      "1\t4\t1000\t0.5\t0.01\t0.2\t0.25\t0\t0.02\n"
      "2\t8\t1900\t0.52\t0.01\t0.2\t0.25\t0.03\t0.02\n",
      "scaling.tsv");
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[1].ranks, 2);
  EXPECT_DOUBLE_EQ(points[1].mel_frames_per_s, 1900);
  EXPECT_DOUBLE_EQ(points[1].comm_s, 0.03);
  EXPECT_DOUBLE_EQ(points[0].optimizer_s, 0.02);
  try {
    tts::report::parse_scaling_table(
        "ranks\tmel_frames_per_s\tstep_s\tdata_wait_s\tforward_s\tbackward_s\tcomm_exposed_s\t"
        "optimizer_s\n1\t1000\tslow\t0\t0\t0\t0\t0\n",
        "t.tsv");
    FAIL() << "no error";
  } catch (const tts::Error& e) {
    EXPECT_NE(std::string(e.what()).find("t.tsv: line 2, column step_s"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(tts::report::parse_scaling_table("ranks\tstep_s\n1\t0.5\n", "t.tsv"), tts::Error);
}
