// The pictures a speech engineer reads: the attention alignment and the mel spectrograms of a
// validation or a synthesis, and the scaling of a run over rank counts. Drawn with Cairo (axes,
// labels, a colour bar, titles), encoded as PNG; the same bytes go to RUN/plots/, TensorBoard,
// `synthesize --plot` and `report`. Torch-free: callers pass plain matrices.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tts::report {

// Row-major [rows, cols] values.
struct Matrix {
  std::vector<float> values;
  int rows = 0;
  int cols = 0;
};

struct Rect {
  double x = 0;
  double y = 0;
  double width = 0;
  double height = 0;
};

// An encoded PNG and where its parts were drawn (pixels, origin at the top left): tests and
// tools find the heat map or the colour bar by name.
struct Plot {
  std::string png;
  int width = 0;
  int height = 0;
  std::map<std::string, Rect> regions;
};

struct AlignmentPlotInput {
  Matrix weights;         // [decoder steps, encoder steps], as the model's attention produces them
  int64_t step = -1;      // the training step (-1: none, e.g. not known)
  std::string utterance;  // utterance id or a short description
  std::string kind;       // "teacher-forced", "free-running", ...
  double diagonal_score = -1;  // alignment scores of this utterance (< 0: not shown)
  double focus_rate = -1;
};

// Encoder steps (up) against decoder steps (right), a colour bar of the weights from 0 to their
// maximum, and a title with the step, utterance, kind and scores. Regions: "heatmap", "colorbar".
// Throws tts::Error for an empty matrix.
Plot alignment_plot(const AlignmentPlotInput& input);

struct MelPanel {
  std::string title;  // "target", "teacher-forced prediction", ...
  Matrix frames;      // [frames, n_mels]
};

struct StopCurve {
  std::string label;
  std::vector<float> values;  // one per frame, in [0, 1]
  bool dashed = false;
};

struct MelPlotInput {
  int64_t step = -1;  // -1: none
  std::string utterance;
  double seconds_per_frame = 0;  // hop_length / sample_rate
  std::vector<MelPanel> panels;  // stacked top to bottom, one colour scale for all
  std::vector<StopCurve> stop;   // stop-token probabilities and targets (empty: no stop panel)
  double stop_threshold = 0.5;
};

// Mel panels stacked over one time axis in seconds (frequency in mel bins up), one colour scale
// and colour bar for all, and below them the stop-token curves with the threshold. Regions:
// "panel0", "panel1", ... (each panel's heat map area), "colorbar", "stop" (when drawn).
// Throws tts::Error without a panel or with an empty one.
Plot mel_plot(const MelPlotInput& input);

// One rank count of a scaling run: throughput and the mean seconds per step in each phase.
struct ScalingPoint {
  int ranks = 1;
  double mel_frames_per_s = 0;
  double step_s = 0;
  double data_s = 0;
  double forward_s = 0;
  double backward_s = 0;
  double comm_s = 0;  // exposed communication
  double optimizer_s = 0;
};

// Speedup (mel frames/s against the first point) with the ideal line, efficiency (speedup per
// added rank, ideal 1.0) and the phase times of a step at each rank count as stacked bars.
// Regions: "speedup", "efficiency", "phases". Throws tts::Error without points.
Plot scaling_plot(const std::vector<ScalingPoint>& points, const std::string& title);

// The points of a tab-separated table with a header row (bench/bench_scaling.sh's
// scaling.tsv): columns ranks, mel_frames_per_s, step_s, data_wait_s, forward_s, backward_s,
// comm_exposed_s, optimizer_s, in any order, others ignored. Throws tts::Error naming `source`,
// the line and the column of what is missing or not a number.
std::vector<ScalingPoint> parse_scaling_table(const std::string& text, const std::string& source);

}  // namespace tts::report
