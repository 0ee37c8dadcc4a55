// The run report: metrics lines parsed strictly, everything from the run escaped, reads bounded,
// symlinks not followed, and the page rendered by a real browser (headless Chromium) with its
// curves, plots and audio, without console errors.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "../support/browser.h"
#include "tts/audio/audio_io.h"
#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/formats/png.h"
#include "tts/report/plots.h"
#include "tts/report/run_report.h"

namespace fs = std::filesystem;
using tts::report::parse_metrics_line;
using tts::report::render_run_report;

namespace {

std::string scratch(const std::string& name) {
  std::string dir = std::string(TTS_TEST_TMP_DIR) + "/" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// What an acoustic model's run holds (as the family says it, FamilyEntry::report): alignment and
// mel plots, a free-running sample, its alignment scores.
tts::report::RunContents alignment_run() {
  tts::report::RunContents contents;
  contents.plots = {{"alignment", "alignment"}, {"mel", "mel"}};
  contents.samples = {{"", "free-running synthesis"}};
  contents.charts = {{"Alignment scores",
                      "alignment_scores",
                      {{"diagonal score", "val", "diagonal_score"}},
                      "score"}};
  return contents;
}

// A run as `train` leaves it: config, metrics of 20 steps with two validations, plots, a sample
// and two checkpoints.
std::string make_run(const std::string& dir) {
  write(dir + "/config.yaml", "audio:\n  sample_rate: 22050  # Hz\n");
  std::string metrics;
  for (int step = 2; step <= 20; step += 2) {
    metrics += "{\"kind\": \"train\", \"step\": " + std::to_string(step) +
               ", \"loss\": " + std::to_string(10.0 / step) +
               ", \"mel_loss\": 1.5, \"gate_loss\": 0.5, \"grad_norm\": 3, \"lr\": 0.001, "
               "\"step_s\": 0.5, \"mel_frames_per_s\": 4000, \"data_wait_s\": 0.01, "
               "\"forward_s\": 0.2, \"backward_s\": 0.25, \"comm_exposed_s\": 0.02, "
               "\"optimizer_s\": 0.01, \"rank_spread\": 1.02, \"padded_frames_imbalance\": 1.01}\n";
    if (step % 10 == 0) {
      metrics += "{\"kind\": \"val\", \"step\": " + std::to_string(step) +
                 ", \"loss\": 1.2, \"diagonal_score\": 0." + std::to_string(step) +
                 ", \"focus_rate\": 0.3, \"infer_diagonal_score\": 0.2, \"infer_focus_rate\": "
                 "null, \"infer_stop_fired\": 0, \"infer_max_steps_hit\": 1, "
                 "\"infer_frame_ratio\": 3.5}\n";
    }
  }
  write(dir + "/metrics.jsonl", metrics);
  tts::report::AlignmentPlotInput alignment;
  alignment.weights = {std::vector<float>(12 * 6, 0.2f), 12, 6};
  alignment.step = 20;
  fs::create_directories(dir + "/plots");
  tts::write_file_atomic(dir + "/plots/step_20_alignment.png",
                         tts::report::alignment_plot(alignment).png);
  tts::report::MelPlotInput mel;
  mel.panels = {{"target", {std::vector<float>(30 * 8, 1.0f), 30, 8}}};
  tts::write_file_atomic(dir + "/plots/step_20_mel.png", tts::report::mel_plot(mel).png);
  fs::create_directories(dir + "/samples");
  tts::audio::write_wav(dir + "/samples/step_20.wav", std::vector<float>(2205, 0.1f), 22050);
  write(dir + "/checkpoints/step_00000010.pt", std::string(1000, 'x'));
  write(dir + "/checkpoints/step_00000020.pt", std::string(2000, 'x'));
  fs::create_symlink("step_00000020.pt", dir + "/checkpoints/latest");
  return dir;
}

}  // namespace

TEST(MetricsLine, ParsesFlatRecordsAndRefusesEverythingElse) {
  auto record = parse_metrics_line(R"({"kind": "train", "step": 4, "loss": 1.5e-1, "x": null})");
  ASSERT_TRUE(record);
  EXPECT_EQ(record->kind, "train");
  EXPECT_EQ(record->values.at("step"), 4);
  EXPECT_DOUBLE_EQ(record->values.at("loss"), 0.15);
  EXPECT_TRUE(std::isnan(record->values.at("x")));
  EXPECT_FALSE(parse_metrics_line(R"({"step": 4})"));                       // no kind
  EXPECT_FALSE(parse_metrics_line(R"({"kind": "train", "a": {"b": 1}})"));  // nested
  EXPECT_FALSE(parse_metrics_line(R"({"kind": "train", "a": 1} trailing)"));
  EXPECT_FALSE(parse_metrics_line(R"({"kind": "train", "a": 1)"));  // cut short
  EXPECT_FALSE(parse_metrics_line(R"({"kind": "train", "a": 1, "b": 2, "c": 3})", 2));
  EXPECT_FALSE(parse_metrics_line(""));
}

TEST(RunReport, EscapesWhatTheRunHoldsAndFollowsNoSymlink) {
  std::string dir = scratch("hostile");
  write(dir + "/config.yaml", "name: </pre><script>alert(1)</script>\n");
  write(dir + "/metrics.jsonl",
        "{\"kind\": \"train\", \"step\": 1, \"loss\": 2}\n"
        "{\"kind\": \"<img src=x onerror=alert(2)>\", \"step\": 1, \"<b>\": 2}\n"
        "not json at all\n" +
            std::string(100000, '{') + "\n");
  std::string secret = scratch("outside") + "/secret.png";
  write(secret, std::string("\x89PNG\r\n\x1a\n", 8) + "TOP-SECRET-BYTES");
  fs::create_directories(dir + "/plots");
  fs::create_symlink(secret, dir + "/plots/step_5_alignment.png");
  write(dir + "/checkpoints/step_<i>.pt", "x");

  std::string html = render_run_report(dir, alignment_run());
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_EQ(html.find("<img src=x"), std::string::npos);
  EXPECT_EQ(html.find("<i>"), std::string::npos);
  EXPECT_NE(html.find("&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("step_&lt;i&gt;.pt"), std::string::npos);
  // The symlinked plot is named as refused, its target's bytes are nowhere in the page.
  EXPECT_NE(html.find("step_5_alignment.png: not a regular file"), std::string::npos);
  EXPECT_EQ(html.find("VE9QLVNFQ1JFVC"), std::string::npos);  // base64 of "TOP-SECRET"
  EXPECT_EQ(html.find("TOP-SECRET"), std::string::npos);
  // The too-long line and the one that is not JSON are skipped and counted.
  EXPECT_NE(html.find("2 line(s) of metrics.jsonl skipped"), std::string::npos);
  // Only our own script runs: one script element, with the page's nonce.
  EXPECT_EQ(count(html, "<script"), 1u);
  EXPECT_NE(html.find("script-src 'nonce-"), std::string::npos);
  EXPECT_NE(html.find("default-src 'none'"), std::string::npos);
}

// Axes whose range is a few units in the last place of its values: adding the tick step to a
// value leaves it unchanged, and the tick maker once looped forever on them.
TEST(RunReport, AxesOfAdjacentDoublesGetTicksAndEnd) {
  std::string dir = scratch("adjacent");
  write(dir + "/metrics.jsonl",
        "{\"kind\": \"train\", \"step\": 4611686018427387904, \"loss\": 1e300}\n"
        "{\"kind\": \"train\", \"step\": 4611686018427388928, \"loss\": "
        "1.0000000000000002e300}\n");
  std::string html = render_run_report(dir);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("1e+300"), std::string::npos);
}

TEST(RunReport, ReadsOnlyTheTailOfAMetricsFileBeyondItsLimit) {
  std::string dir = scratch("long_metrics");
  std::string metrics;
  for (int step = 1; step <= 1000; ++step) {
    metrics += "{\"kind\": \"train\", \"step\": " + std::to_string(step) + ", \"loss\": 1}\n";
  }
  write(dir + "/metrics.jsonl", metrics);
  tts::report::ReportLimits limits;
  limits.metrics_bytes = 4096;
  limits.points_per_curve = 10;
  std::string html = render_run_report(dir, {}, limits);
  EXPECT_NE(html.find("only its last"), std::string::npos);
  // About 4096 / 42 bytes of records: the last 97 or so, every one whole.
  std::smatch records;
  ASSERT_TRUE(std::regex_search(html, records, std::regex(R"(&middot; (\d+) metrics records)")));
  EXPECT_GT(std::stoi(records[1]), 80);
  EXPECT_LT(std::stoi(records[1]), 110);
  EXPECT_EQ(html.find("skipped"), std::string::npos);  // the cut line is dropped, not counted
  // The loss curve is thinned to 10 points: one path with 10 coordinates.
  std::smatch path;
  ASSERT_TRUE(std::regex_search(
      html, path, std::regex(R"re(<path d="([^"]*)"[^>]*data-series="training loss")re")));
  EXPECT_EQ(count(path[1].str(), ","), 10u);
}

TEST(RunReport, RefusesADirectoryThatIsNotARun) {
  std::string dir = scratch("not_a_run");
  try {
    render_run_report(dir);
    FAIL() << "no error";
  } catch (const tts::Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a run directory"), std::string::npos) << e.what();
  }
  EXPECT_THROW(render_run_report(dir + "/missing"), tts::Error);
}

TEST(RunReport, RendersInChromiumWithCurvesPlotsAndAudioAndNoConsoleErrors) {
  std::string chromium = tts::test::find_chromium();
  if (chromium.empty()) GTEST_SKIP() << "no Chromium on PATH (scripts/setup.sh installs chromium)";
  std::string dir = make_run(scratch("browser") + "/run");
  std::string html_path = scratch("browser_page") + "/report.html";
  tts::write_file_atomic(html_path, render_run_report(dir, alignment_run()));
  auto page = tts::test::open_in_chromium(chromium, html_path, scratch("browser_chromium"));
  ASSERT_EQ(page.exit_code, 0);
  EXPECT_EQ(page.console, "") << "console messages while loading the report";
  // Our check script ran after the load event: both plots decoded.
  EXPECT_NE(page.dom.find("data-images-ok=\"2\""), std::string::npos) << page.dom.substr(0, 3000);
  EXPECT_NE(page.dom.find("data-images-broken=\"0\""), std::string::npos);
  EXPECT_EQ(count(page.dom, "<svg class=\"chart\""),
            8u);  // 2 losses, scores, 2 optimizers, 3 speed
  for (const char* series : {"training loss", "validation loss", "diagonal score", "forward",
                             "exposed communication", "rank spread", "mel frames/s"}) {
    EXPECT_NE(page.dom.find("data-series=\"" + std::string(series) + "\""), std::string::npos)
        << series;
  }
  EXPECT_NE(page.dom.find("<audio controls=\"\" id=\"sample\" src=\"data:audio/wav;base64,"),
            std::string::npos);
  EXPECT_NE(page.dom.find("step_00000020.pt</code></td>"), std::string::npos);
  EXPECT_NE(page.dom.find("\u2190 latest"), std::string::npos);

  // The screenshot (kept in the test's scratch folder) is the page drawn: its size, not blank.
  auto shot = tts::formats::decode_png(tts::read_file(page.screenshot));
  EXPECT_EQ(shot.width, 1320);
  EXPECT_EQ(shot.height, 4000);
  size_t coloured = 0;
  for (size_t i = 0; i + 2 < shot.rgb.size(); i += 3) {
    coloured += !(shot.rgb[i] == shot.rgb[i + 1] && shot.rgb[i + 1] == shot.rgb[i + 2]);
  }
  EXPECT_GT(coloured, 20000u) << "curves and plots should colour the page";
}

// `evaluate --out RUN/eval`: the page shows the means and a row per speaker, names escaped, an
// undefined figure as a dash; a file that is not an evaluation is said, not fatal.
TEST(RunReport, ShowsTheEvaluationOfTheRunWithItsSpeakers) {
  const std::string dir = scratch("evaluation_run");
  make_run(dir);
  EXPECT_EQ(render_run_report(dir, alignment_run()).find("id=\"evaluation\""), std::string::npos);
  write(dir + "/eval/evaluate.json",
        R"({"settings": {}, "utterances": [],
            "summary": {"utterances": 4, "mcd_db": 7.25, "f0_rmse_hz": 31.5, "vde": 0.25,
                        "cer": null},
            "speakers": {"en-gb_m2": {"utterances": 2, "mcd_db": 7.5, "f0_rmse_hz": null,
                                      "vde": 0.125, "cer": null},
                         "<b>x</b>": {"utterances": 2, "mcd_db": 7, "f0_rmse_hz": 31.5,
                                      "vde": 0.375, "cer": null}},
            "reference_only": [], "synthesized_only": []})");
  std::string html = render_run_report(dir, alignment_run());
  const size_t section = html.find("<h2 id=\"evaluation\">");
  ASSERT_NE(section, std::string::npos);
  EXPECT_LT(section, html.find("<h2 id=\"checkpoints\">"));
  html = html.substr(section, html.find("<h2 id=\"checkpoints\">") - section);
  EXPECT_NE(html.find("<tr><th>all</th><td class=\"num\">4</td><td class=\"num\">7.25</td>"
                      "<td class=\"num\">31.5</td><td class=\"num\">0.250</td>"
                      "<td class=\"num\">&ndash;</td></tr>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<tr><td>en-gb_m2</td><td class=\"num\">2</td><td class=\"num\">7.50</td>"
                      "<td class=\"num\">&ndash;</td>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("&lt;b&gt;x&lt;/b&gt;"), std::string::npos) << html;
  EXPECT_EQ(html.find("<b>x</b>"), std::string::npos) << html;

  write(dir + "/eval/evaluate.json", R"({"summary": [1, 2]})");
  html = render_run_report(dir, alignment_run());
  EXPECT_NE(html.find("expected an object &quot;summary&quot;"), std::string::npos) << html;
  write(dir + "/eval/evaluate.json", "{not json");
  html = render_run_report(dir, alignment_run());
  EXPECT_NE(html.find("id=\"evaluation\""), std::string::npos);
  EXPECT_NE(html.find("eval/evaluate.json line 1"), std::string::npos) << html;
}
