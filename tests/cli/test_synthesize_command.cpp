// tts-train synthesize through the real CLI on checkpoints made here. A model whose stop token
// fires at its first decoder step (as an untrained one's may: validation's one-step run in
// tests/train/test_side_work_runs.cpp) gives too few frames for Griffin-Lim's STFT; synthesize
// pads them, as validation's sample does, and writes a WAV.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "cli_test_util.h"
#include "tts/audio/audio_io.h"
#include "tts/checkpoint/checkpoint.h"
#include "tts/config/config.h"
#include "tts/core/fs.h"
#include "tts/formats/npy.h"
#include "tts/models/tacotron2/layers/network.h"
#include "tts/text/text_processor.h"

namespace fs = std::filesystem;
using tts::test::run_cli;

namespace {

const std::string kTiny = std::string(TTS_SOURCE_DIR) + "/configs/tiny.yaml";

// A run directory under `dir` whose checkpoint is an untrained tiny model with its stop-token
// bias at +50: every utterance stops at the first decoder step, r = 2 frames or fewer.
std::string stop_at_once_checkpoint(const std::string& dir, const tts::config::Config& config) {
  int64_t n_linear = config.model.predict_linear ? config.audio.n_linear() : 0;
  tts::tacotron2::Tacotron2 model(config.model, tts::text::TextProcessor(config.text).num_symbols(),
                                  config.audio.n_mels, n_linear, config.train.max_scheduled_r());
  auto parameters = model->named_parameters();
  torch::Tensor* gate_bias = parameters.find("decoder.gate_layer.bias");
  EXPECT_NE(gate_bias, nullptr) << "the stop-token layer was renamed";
  if (gate_bias == nullptr) return "";
  torch::NoGradGuard no_grad;
  gate_bias->fill_(50.0);
  tts::checkpoint::save_checkpoint(
      dir + "/checkpoints",
      tts::checkpoint::capture(*model, {}, {}, tts::config::dump_config(config)), 1);
  return dir + "/checkpoints/latest";
}

}  // namespace

TEST(SynthesizeCommand, AnUtteranceThatStopsAtOncePadsTheSpectrumAndWritesAValidWav) {
  for (bool linear_head : {false, true}) {
    SCOPED_TRACE(linear_head ? "linear head" : "mel only");
    std::string dir =
        tts::test::fresh_dir(linear_head ? "synthesize_stop_linear" : "synthesize_stop_mel");
    tts::config::Config config = tts::config::load_config(
        kTiny, {std::string("model.predict_linear=") + (linear_head ? "true" : "false")});
    std::string checkpoint = stop_at_once_checkpoint(dir, config);
    ASSERT_FALSE(checkpoint.empty());

    tts::test::CliResult result = run_cli("synthesize --checkpoint " + checkpoint +
                                              " --text \"Printing, in the only sense.\" --plot "
                                              "--out " +
                                              dir + "/a.wav",
                                          true);
    ASSERT_EQ(result.exit_code, 0) << result.output;
    // tiny.yaml: n_fft 1024, hop 256, so Griffin-Lim needs 5 frames.
    EXPECT_NE(result.output.find("sentence 1 stopped after "), std::string::npos) << result.output;
    EXPECT_NE(result.output.find("padded to 5 frames for Griffin-Lim"), std::string::npos)
        << result.output;

    std::vector<float> samples = tts::audio::read_audio(dir + "/a.wav", config.audio);
    EXPECT_GE(samples.size(), static_cast<size_t>(config.audio.n_fft));
    for (float sample : samples) ASSERT_TRUE(std::isfinite(sample));
    for (const char* file : {"a.mel.npy", "a.alignment.png", "a.mel.png"}) {
      EXPECT_TRUE(fs::exists(dir + "/" + file)) << file;
    }
    EXPECT_EQ(fs::exists(dir + "/a.linear.npy"), linear_head);
  }
}

// Text that says nothing is refused naming its characters, escaped: only whitespace, or nothing
// but whitespace left once the symbol set dropped what it lacks. Characters dropped from a
// sentence that is spoken are summed up at the end, as their first warning promises.
TEST(SynthesizeCommand, TextThatSaysNothingIsRefusedNamingItsCharacters) {
  const std::string dir = tts::test::fresh_dir("synthesize_nothing");
  tts::config::Config config = tts::config::load_config(kTiny, {"text.cleaners=[basic_cleaners]"});
  const std::string checkpoint = stop_at_once_checkpoint(dir, config);
  ASSERT_FALSE(checkpoint.empty());
  const std::string synthesize = "synthesize --checkpoint " + checkpoint + " --out " + dir;

  tts::test::CliResult blank = run_cli(synthesize + "/a.wav --text \"$(printf ' \\t ')\"", true);
  EXPECT_EQ(blank.exit_code, 2) << blank.output;
  EXPECT_NE(blank.output.find("sentence 1 is only whitespace"), std::string::npos) << blank.output;
  EXPECT_NE(blank.output.find("U+0009"), std::string::npos) << blank.output;
  EXPECT_NE(blank.output.find("(U+0020) x2"), std::string::npos) << blank.output;

  tts::test::CliResult dropped = run_cli(synthesize + "/b.wav --text \"☃ ☃\"", true);
  EXPECT_EQ(dropped.exit_code, 2) << dropped.output;
  EXPECT_NE(dropped.output.find("says nothing in symbol set"), std::string::npos) << dropped.output;
  EXPECT_NE(dropped.output.find("'☃' (U+2603)"), std::string::npos) << dropped.output;
  EXPECT_FALSE(fs::exists(dir + "/b.wav"));

  tts::test::CliResult spoken = run_cli(synthesize + "/c.wav --text \"Snow ☃ falls ☃.\"", true);
  ASSERT_EQ(spoken.exit_code, 0) << spoken.output;
  EXPECT_NE(spoken.output.find("dropped characters not in symbol set"), std::string::npos)
      << spoken.output;
  EXPECT_NE(spoken.output.find("'☃' (U+2603) x2"), std::string::npos) << spoken.output;
  EXPECT_NE(spoken.output.find("warnings over 1 sentence(s): 1 padded for Griffin-Lim"),
            std::string::npos)
      << spoken.output;
}

// --out by the rule every command shares (cli/outputs.h): with several sentences it is a folder
// of N.wav (so two equal sentences never share a name), a file name there is refused, as are an
// extension synthesize does not write and a missing folder above --out; nothing is written.
TEST(SynthesizeCommand, OutputsAreCheckedBeforeAnythingIsWritten) {
  const std::string dir = tts::test::fresh_dir("synthesize_outputs");
  tts::config::Config config = tts::config::load_config(kTiny);
  const std::string checkpoint = stop_at_once_checkpoint(dir, config);
  ASSERT_FALSE(checkpoint.empty());
  const std::string lines = tts::test::write_temp("two_lines.txt", "Say it.\nSay it.\n");
  const std::string synthesize = "synthesize --checkpoint " + checkpoint;

  tts::test::CliResult file =
      run_cli(synthesize + " --text-file " + lines + " --out " + dir + "/both.wav", true);
  EXPECT_EQ(file.exit_code, 2) << file.output;
  EXPECT_NE(file.output.find("with 2 sentences --out is a folder"), std::string::npos)
      << file.output;
  EXPECT_FALSE(fs::exists(dir + "/both.wav"));

  tts::test::CliResult mp3 = run_cli(synthesize + " --text Hi --out " + dir + "/a.mp3", true);
  EXPECT_EQ(mp3.exit_code, 2) << mp3.output;
  EXPECT_NE(mp3.output.find("give a file ending in .wav"), std::string::npos) << mp3.output;

  tts::test::CliResult missing =
      run_cli(synthesize + " --text-file " + lines + " --out " + dir + "/no/such", true);
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("no folder " + dir + "/no to create it in"), std::string::npos)
      << missing.output;
  EXPECT_FALSE(fs::exists(dir + "/no"));

  tts::test::CliResult no_parent =
      run_cli(synthesize + " --text Hi --out " + dir + "/no/a.wav", true);
  EXPECT_EQ(no_parent.exit_code, 2) << no_parent.output;
  EXPECT_NE(no_parent.output.find("no folder " + dir + "/no to write"), std::string::npos)
      << no_parent.output;

  tts::test::CliResult spoken =
      run_cli(synthesize + " --text-file " + lines + " --out " + dir + "/said", true);
  ASSERT_EQ(spoken.exit_code, 0) << spoken.output;
  for (const char* file : {"1.wav", "1.mel.npy", "2.wav", "2.mel.npy"}) {
    EXPECT_TRUE(fs::exists(dir + "/said/" + file)) << file;
  }
}

// Outputs are what their names say: "-" means standard output, which synthesize writes with
// --stream alone, so without it it is refused (no folder named "-"); a sentence's files are named
// by its --text-file line, so a blank line shifts nothing.
TEST(SynthesizeCommand, DashIsRefusedAndOutputsAreNamedByTheirLine) {
  const std::string dir = tts::test::fresh_dir("synthesize_names");
  tts::config::Config config = tts::config::load_config(kTiny);
  const std::string checkpoint = stop_at_once_checkpoint(dir, config);
  ASSERT_FALSE(checkpoint.empty());
  const std::string synthesize = "synthesize --checkpoint " + checkpoint;
  const std::string cwd = fs::current_path().string();
  tts::test::CliResult dash =
      run_cli("--log-level warn " + synthesize + " --text Hi --out -", true);
  EXPECT_EQ(dash.exit_code, 2) << dash.output;
  EXPECT_NE(dash.output.find("--out -: standard output takes audio as it is decoded: add --stream"),
            std::string::npos)
      << dash.output;
  EXPECT_FALSE(fs::exists(cwd + "/-"));

  const std::string lines = tts::test::write_temp("gapped_lines.txt", "First.\n\n  \nFourth.\n");
  tts::test::CliResult spoken =
      run_cli(synthesize + " --text-file " + lines + " --out " + dir + "/said", true);
  ASSERT_EQ(spoken.exit_code, 0) << spoken.output;
  EXPECT_TRUE(fs::exists(dir + "/said/1.wav"));
  EXPECT_TRUE(fs::exists(dir + "/said/4.wav"));
  // Each mel carries the settings it was made with, for vocode to check.
  EXPECT_TRUE(fs::exists(dir + "/said/4.mel.yaml"));
  EXPECT_FALSE(fs::exists(dir + "/said/2.wav"));
  EXPECT_FALSE(fs::exists(dir + "/said/3.wav"));
  EXPECT_NE(spoken.output.find("/said/4.wav"), std::string::npos) << spoken.output;

  // An acoustic model given to vocode is sent to synthesize, where it belongs.
  tts::test::CliResult vocode = run_cli("vocode --checkpoint " + checkpoint + " --mel " + dir +
                                            "/said/1.mel.npy --out " + dir + "/v.wav",
                                        true);
  EXPECT_EQ(vocode.exit_code, 2) << vocode.output;
  EXPECT_NE(vocode.output.find("not a vocoder: it speaks text, with tts-train synthesize "
                               "--checkpoint"),
            std::string::npos)
      << vocode.output;
  EXPECT_FALSE(fs::exists(dir + "/v.wav"));
}

// Sentences decoded together speak as they do alone: the prenet's dropout (on in inference) is
// keyed by the sentence, and each sentence stops at its own stop token. A rerun repeats itself.
TEST(SynthesizeCommand, BatchedSentencesSpeakAsTheyDoOneAtATime) {
  const std::string dir = tts::test::fresh_dir("synthesize_batched");
  tts::config::Config config = tts::config::load_config(kTiny, {"model.max_decoder_steps=30"});
  torch::manual_seed(5);
  tts::tacotron2::Tacotron2 model(config.model, tts::text::TextProcessor(config.text).num_symbols(),
                                  config.audio.n_mels, 0, config.train.max_scheduled_r());
  {
    torch::NoGradGuard no_grad;
    auto parameters = model->named_parameters();
    parameters.find("decoder.gate_layer.weight")->normal_(0, 1.0);
    parameters.find("decoder.gate_layer.bias")->fill_(-1.0);
  }
  tts::checkpoint::save_checkpoint(
      dir + "/checkpoints",
      tts::checkpoint::capture(*model, {}, {}, tts::config::dump_config(config)), 1);
  const std::string lines = dir + "/lines.txt";
  std::ofstream(lines) << "Printing, in the only sense.\nA second sentence, longer than the "
                          "first one.\nThird.\n";
  const std::string synthesize =
      "synthesize --checkpoint " + dir + "/checkpoints/latest --text-file " + lines;
  for (const char* run : {"alone", "batched", "again"}) {
    const std::string batch = std::string(run) == "batched" ? "3" : "1";
    tts::test::CliResult result =
        run_cli(synthesize + " --batch " + batch + " --out " + dir + "/" + run, true);
    ASSERT_EQ(result.exit_code, 0) << result.output;
  }
  for (int sentence = 1; sentence <= 3; ++sentence) {
    SCOPED_TRACE(sentence);
    const std::string mel = "/" + std::to_string(sentence) + ".mel.npy";
    const tts::formats::NpyArray alone = tts::formats::read_npy(dir + "/alone" + mel);
    const tts::formats::NpyArray batched = tts::formats::read_npy(dir + "/batched" + mel);
    ASSERT_EQ(alone.shape, batched.shape);
    for (size_t i = 0; i < alone.data.size(); ++i) {
      ASSERT_NEAR(alone.data[i], batched.data[i], 1e-4) << "value " << i;
    }
    EXPECT_EQ(tts::read_file(dir + "/alone" + mel), tts::read_file(dir + "/again" + mel));
  }
}
