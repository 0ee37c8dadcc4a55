// `tts-train report` on a real short training run: the page holds the run's curves, its latest
// validation's plots (PNG that decode) and audio, its checkpoints and config, and a real browser
// renders it without console errors (the screenshot stays in the test's scratch folder).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "../support/browser.h"
#include "train_fixture.h"
#include "tts/core/fs.h"
#include "tts/formats/png.h"

namespace fs = std::filesystem;
using tts::test::CliResult;
using tts::test::run_cli;

namespace {

class ReportCommand : public tts::test::TrainFixture {};

std::string base64_decode(const std::string& text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
  };
  std::string out;
  int bits = 0;
  uint32_t buffer = 0;
  for (char c : text) {
    int v = value(c);
    if (v < 0) break;
    buffer = buffer << 6 | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> bits) & 0xff));
    }
  }
  return out;
}

}  // namespace

TEST_F(ReportCommand, ReportsARealRunAndABrowserRendersIt) {
  train("run",
        "--max-steps 4 --set train.val_interval=2 --set train.checkpoint_interval=2 "
        "--set train.log_interval=1");
  std::string run = root_ + "/run";

  CliResult result = run_cli("report " + run, true);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  std::string html = tts::read_file(run + "/report.html");  // the default --out
  EXPECT_NE(html.find("<h1>tts-train run <code>run</code></h1>"), std::string::npos);
  EXPECT_NE(html.find("id=\"plot_alignment\""), std::string::npos);
  EXPECT_NE(html.find("id=\"plot_mel\""), std::string::npos);
  EXPECT_NE(html.find("Plots of step 4"), std::string::npos);
  EXPECT_NE(html.find("data:audio/wav;base64,UklGR"), std::string::npos);  // "RIFF"
  EXPECT_NE(html.find("step_00000004.pt"), std::string::npos);
  EXPECT_NE(html.find("sample_rate: 22050"), std::string::npos);  // the config
  EXPECT_EQ(html.find("class=\"warn\""), std::string::npos) << "a real run has nothing to warn of";
  // Its family's sections (FamilyEntry::report), none of a vocoder's.
  EXPECT_NE(html.find("Tacotron-2"), std::string::npos);
  EXPECT_NE(html.find("data-series=\"diagonal score\""), std::string::npos);
  EXPECT_NE(html.find("Griffin-Lim"), std::string::npos);
  EXPECT_EQ(html.find("id=\"sample_real\""), std::string::npos);
  EXPECT_EQ(html.find("recorded audio"), std::string::npos);

  // The embedded plots are the run's own PNGs, whole. (std::regex would recurse once per
  // character over half a megabyte of base64: plain finds.)
  const std::string prefix = "data:image/png;base64,";
  std::vector<std::string> images;
  for (size_t at = html.find(prefix); at != std::string::npos; at = html.find(prefix, at + 1)) {
    size_t begin = at + prefix.size();
    images.push_back(base64_decode(html.substr(begin, html.find('"', begin) - begin)));
  }
  ASSERT_EQ(images.size(), 2u);
  EXPECT_EQ(images[0], tts::read_file(run + "/plots/step_4_alignment.png"));
  EXPECT_EQ(images[1], tts::read_file(run + "/plots/step_4_mel.png"));
  EXPECT_EQ(tts::formats::decode_png(images[0]).width, 900);

  CliResult elsewhere = run_cli("report " + run + " --out " + root_ + "/copy.html");
  ASSERT_EQ(elsewhere.exit_code, 0);
  EXPECT_TRUE(fs::exists(root_ + "/copy.html"));
  // A run whose config.yaml is gone: the sections every run has, and why no more.
  const std::string bare = root_ + "/bare_run";
  fs::create_directories(bare);
  fs::copy_file(run + "/metrics.jsonl", bare + "/metrics.jsonl",
                fs::copy_options::overwrite_existing);
  CliResult unknown = run_cli("report " + bare, true);
  ASSERT_EQ(unknown.exit_code, 0) << unknown.output;
  const std::string bare_html = tts::read_file(bare + "/report.html");
  EXPECT_NE(bare_html.find("the run&#39;s family is not known (config.yaml: not a regular file)"),
            std::string::npos);
  EXPECT_NE(bare_html.find("data-series=\"training loss\""), std::string::npos);
  EXPECT_EQ(bare_html.find("diagonal score"), std::string::npos);
  CliResult missing = run_cli("report " + root_ + "/no_such_run", true);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find("not a directory"), std::string::npos) << missing.output;

  std::string chromium = tts::test::find_chromium();
  if (chromium.empty()) GTEST_SKIP() << "no Chromium on PATH (scripts/setup.sh installs chromium)";
  auto page = tts::test::open_in_chromium(chromium, run + "/report.html", root_ + "/chromium");
  ASSERT_EQ(page.exit_code, 0);
  EXPECT_EQ(page.console, "");
  EXPECT_NE(page.dom.find("data-images-ok=\"2\""), std::string::npos);
  EXPECT_NE(page.dom.find("data-series=\"training loss\""), std::string::npos);
  EXPECT_NE(page.dom.find("data-series=\"diagonal score\""), std::string::npos);
  EXPECT_GT(tts::formats::decode_png(tts::read_file(page.screenshot)).height, 0);
}
