// Our hand-written TensorBoard event files, read by TensorBoard's own EventAccumulator: a real
// run's scalars (losses, phase timers, alignment scores), images and audio, at the right steps.
// Needs a Python with the tensorboard package: $TTS_TEST_PYTHON, or the virtual environment
// scripts/setup.sh makes (.deps/torch-<pin>/bin/python); skipped, saying why, without one.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "../cli/train_fixture.h"
#include "tts/core/fs.h"

namespace fs = std::filesystem;

namespace {

std::string python_path() {
  if (const char* python = std::getenv("TTS_TEST_PYTHON")) return python;
  return std::string(TTS_SOURCE_DIR) + "/.deps/torch-2.11.0/bin/python";
}

tts::test::CliResult run_shell(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  std::string output;
  std::array<char, 4096> buffer{};
  size_t n;
  while (pipe != nullptr && (n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    output.append(buffer.data(), n);
  }
  int status = pipe != nullptr ? pclose(pipe) : -1;
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 1, output};
}

// Prints, as the last line, one JSON object: {"scalars": {tag: [[step, value], ...]},
// "images": {tag: [[step, width, height, bytes], ...]}, "audio": {tag: [[step, rate, frames,
// content_type], ...]}}.
constexpr const char* kReader = R"(
import json, sys
from tensorboard.backend.event_processing import event_accumulator as ea
acc = ea.EventAccumulator(sys.argv[1], size_guidance={ea.SCALARS: 0, ea.IMAGES: 0, ea.AUDIO: 0})
acc.Reload()
tags = acc.Tags()
out = {"scalars": {t: [[e.step, e.value] for e in acc.Scalars(t)] for t in tags["scalars"]},
       "images": {t: [[e.step, e.width, e.height, len(e.encoded_image_string)]
                      for e in acc.Images(t)] for t in tags["images"]},
       "audio": {t: [[e.step, e.sample_rate, e.length_frames, e.content_type]
                     for e in acc.Audio(t)] for t in tags["audio"]}}
print(json.dumps(out))
)";

class TensorBoardReader : public tts::test::TrainFixture {};

std::vector<int64_t> steps_of(const YAML::Node& events) {
  std::vector<int64_t> steps;
  for (const auto& event : events) steps.push_back(event[0].as<int64_t>());
  return steps;
}

}  // namespace

TEST_F(TensorBoardReader, FindsOurScalarsImagesAndAudioAtTheirSteps) {
  std::string python = python_path();
  if (!fs::exists(python) || run_shell(python + " -c 'import tensorboard'").exit_code != 0) {
    GTEST_SKIP() << "no Python with the tensorboard package at " << python
                 << " (scripts/setup.sh --torch pip installs one; TTS_TEST_PYTHON picks another)";
  }
  train("tb",
        "--max-steps 4 --set train.val_interval=2 --set train.log_interval=2 "
        "--set train.checkpoint_interval=2 --set logging.samples=true");
  std::string run = root_ + "/tb";
  std::string script = tts::test::write_temp("read_events.py", kReader);
  tts::test::CliResult read = run_shell(python + " " + script + " " + run);
  ASSERT_EQ(read.exit_code, 0) << read.output;
  // The JSON line is the last; TensorBoard may warn before it (no TensorFlow installed).
  std::string output = read.output.substr(0, read.output.find_last_not_of('\n') + 1);
  std::string last_line = output.substr(output.rfind('\n') + 1);
  YAML::Node events = YAML::Load(last_line);  // JSON is YAML

  const std::vector<int64_t> every_two{2, 4};
  for (const char* tag : {"train/loss", "train/mel_loss", "train/gate_loss", "train/grad_norm",
                          "train/lr", "train/data_wait_s", "train/forward_s", "train/backward_s",
                          "train/optimizer_s", "train/step_s"}) {
    ASSERT_TRUE(events["scalars"][tag].IsDefined()) << tag << " missing: " << last_line;
    EXPECT_EQ(steps_of(events["scalars"][tag]), every_two) << tag;
  }
  for (const char* tag :
       {"val/loss", "val/diagonal_score", "val/focus_rate", "val/infer_diagonal_score",
        "val/infer_focus_rate", "val/infer_stop_fired", "val/infer_frame_ratio"}) {
    ASSERT_TRUE(events["scalars"][tag].IsDefined()) << tag << " missing: " << last_line;
    EXPECT_EQ(steps_of(events["scalars"][tag]), every_two) << tag;
  }
  // The values are those of metrics.jsonl (as float32).
  std::stringstream lines(tts::read_file(run + "/metrics.jsonl"));
  std::vector<double> diagonal;
  for (std::string line; std::getline(lines, line);) {
    YAML::Node record = YAML::Load(line);
    if (record["kind"].as<std::string>() == "val") {
      diagonal.push_back(record["diagonal_score"].as<double>());
    }
  }
  ASSERT_EQ(diagonal.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_NEAR(events["scalars"]["val/diagonal_score"][i][1].as<double>(), diagonal[i], 1e-6);
  }

  for (const char* tag : {"val/alignment", "val/mel"}) {
    ASSERT_TRUE(events["images"][tag].IsDefined()) << tag << " missing: " << last_line;
    EXPECT_EQ(steps_of(events["images"][tag]), every_two) << tag;
    for (const auto& image : events["images"][tag]) {
      EXPECT_GT(image[1].as<int>(), 0);
      EXPECT_GT(image[2].as<int>(), 0);
      EXPECT_GT(image[3].as<int>(), 50);
    }
  }
  auto alignment_png = tts::read_file(run + "/plots/step_4_alignment.png");
  EXPECT_EQ(events["images"]["val/alignment"][1][3].as<size_t>(), alignment_png.size());

  ASSERT_TRUE(events["audio"]["val/audio"].IsDefined()) << "audio missing: " << last_line;
  EXPECT_EQ(steps_of(events["audio"]["val/audio"]), every_two);
  for (const auto& clip : events["audio"]["val/audio"]) {
    EXPECT_DOUBLE_EQ(clip[1].as<double>(), 22050.0);
    EXPECT_GE(clip[2].as<int64_t>(), 1024);  // at least one STFT frame of samples
    EXPECT_EQ(clip[3].as<std::string>(), "audio/wav");
  }
}
