// tts-train inspect through the real CLI on a checkpoint made here: what its help promises (the
// audio settings and the config, in text and as --json fields) in columns that line up.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <yaml-cpp/yaml.h>

#include <sstream>

#include "cli_test_util.h"
#include "tts/checkpoint/checkpoint.h"
#include "tts/config/config.h"
#include "tts/models/tacotron2/layers/network.h"
#include "tts/text/text_processor.h"

using tts::test::run_cli;

namespace {

const std::string kTiny = std::string(TTS_SOURCE_DIR) + "/configs/tiny.yaml";

// Where the value after `label` starts in the first line of `text` that begins with `label` and
// a space (the first character past the spaces); npos if no line does.
size_t value_column(const std::string& text, const std::string& label) {
  std::stringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(label + " ", 0) == 0) return line.find_first_not_of(' ', label.size());
  }
  return std::string::npos;
}

}  // namespace

TEST(InspectCommand, ShowsTheAudioSettingsAndTheConfigInAlignedColumnsAndAsJsonFields) {
  const std::string dir = tts::test::fresh_dir("inspect_command");
  tts::config::Config config = tts::config::load_config(kTiny, {"audio.fmax=7000"});
  tts::tacotron2::Tacotron2 model(config.model, tts::text::TextProcessor(config.text).num_symbols(),
                                  config.audio.n_mels, 0, config.train.max_scheduled_r());
  tts::checkpoint::save_checkpoint(
      dir + "/checkpoints",
      tts::checkpoint::capture(*model, {}, {}, tts::config::dump_config(config)), 1);
  const std::string checkpoint = dir + "/checkpoints/latest";

  tts::test::CliResult text = run_cli("inspect " + checkpoint);
  ASSERT_EQ(text.exit_code, 0) << text.output;
  // Every column starts where the others of its block do.
  const size_t header = value_column(text.output, "checkpoint");
  ASSERT_NE(header, std::string::npos) << text.output;
  // The file `latest` resolved to, beside what was given.
  const std::string file = tts::checkpoint::checkpoint_files(checkpoint).front();
  EXPECT_NE(text.output.find(file + " (from " + checkpoint + ")"), std::string::npos)
      << text.output;
  for (const char* label : {"step", "trained on", "parameters", "audio", "model"}) {
    EXPECT_EQ(value_column(text.output, label), header) << label << ":\n" << text.output;
  }
  EXPECT_NE(text.output.find("config (as trained)"), std::string::npos) << text.output;
  const size_t config_column = value_column(text.output, "  audio.fmax");
  ASSERT_NE(config_column, std::string::npos) << text.output;
  for (const char* key :
       {"  audio.sample_rate", "  text.cleaners", "  train.r_schedule", "  distributed.backend"}) {
    EXPECT_EQ(value_column(text.output, key), config_column) << key << ":\n" << text.output;
  }
  EXPECT_NE(text.output.find("  audio.fmax"), std::string::npos);
  EXPECT_NE(text.output.find("7000"), std::string::npos) << text.output;
  const size_t shape = value_column(text.output, "tensor");
  ASSERT_NE(shape, std::string::npos) << text.output;
  for (const char* tensor : {"embedding.weight", "decoder.gate_layer.bias"}) {
    EXPECT_EQ(value_column(text.output, tensor), shape) << tensor << ":\n" << text.output;
  }

  tts::test::CliResult json = run_cli("inspect --json " + checkpoint);
  ASSERT_EQ(json.exit_code, 0) << json.output;
  YAML::Node parsed = YAML::Load(json.output);  // JSON is YAML
  EXPECT_EQ(parsed["file"].as<std::string>(), file);
  EXPECT_EQ(parsed["audio"]["sample_rate"].as<int>(), 22050);
  EXPECT_EQ(parsed["audio"]["fmax"].as<double>(), 7000.0);
  EXPECT_EQ(parsed["config"]["audio"]["n_fft"].as<int>(), config.audio.n_fft);
  EXPECT_EQ(parsed["config"]["text"]["cleaners"][0].as<std::string>(),
            "english_cleaners_corrected");
  EXPECT_EQ(parsed["config"]["model"]["kind"].as<std::string>(), "tacotron2");
  EXPECT_EQ(parsed["config"]["train"]["batch_size"].as<int>(), config.train.batch_size);
  EXPECT_TRUE(parsed["config"]["train"]["r_schedule"].IsSequence());
}
