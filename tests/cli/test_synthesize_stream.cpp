// tts-train synthesize --stream through the real CLI: standard output gets a WAV whose header
// says "until the end" (or raw 16-bit samples), sentences in order; a file grows and gets its
// sizes at the end (a symbolic link planted there is replaced, not written through); one whole
// chunk streams exactly what the file of a whole sentence holds; the summary gives the first
// audio's time; and what cannot work is refused before anything loads.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "cli_test_util.h"
#include "tts/audio/audio_io.h"
#include "tts/checkpoint/checkpoint.h"
#include "tts/config/config.h"
#include "tts/core/fs.h"
#include "tts/models/tacotron2/layers/network.h"
#include "tts/text/text_processor.h"

namespace fs = std::filesystem;
using tts::test::run_cli;
using tts::test::run_shell;

namespace {

const std::string kTiny = std::string(TTS_SOURCE_DIR) + "/configs/tiny.yaml";

// An untrained tiny model whose stop token never fires: every sentence is 24 decoder steps.
std::string never_stopping_checkpoint(const std::string& dir) {
  const tts::config::Config config =
      tts::config::load_config(kTiny, {"model.max_decoder_steps=24"});
  tts::tacotron2::Tacotron2 model(config.model, tts::text::TextProcessor(config.text).num_symbols(),
                                  config.audio.n_mels, 0, config.train.max_scheduled_r());
  torch::NoGradGuard no_grad;
  model->named_parameters().find("decoder.gate_layer.bias")->fill_(-50.0);
  tts::checkpoint::save_checkpoint(
      dir + "/checkpoints",
      tts::checkpoint::capture(*model, {}, {}, tts::config::dump_config(config)), 1);
  return dir + "/checkpoints/latest";
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

uint32_t u32(const std::string& bytes, size_t at) {
  uint32_t v = 0;
  std::memcpy(&v, bytes.data() + at, 4);
  return v;
}

std::vector<int16_t> samples_of(const std::string& bytes, size_t from) {
  std::vector<int16_t> out((bytes.size() - from) / 2);
  std::memcpy(out.data(), bytes.data() + from, out.size() * 2);
  return out;
}

// The 16-bit samples of a WAV file written whole (libsndfile's 44-byte header).
std::vector<int16_t> wav_samples(const std::string& path) {
  const std::string bytes = read_bytes(path);
  EXPECT_EQ(bytes.substr(36, 4), "data") << path;
  return samples_of(bytes, 44);
}

}  // namespace

TEST(SynthesizeStream, StandardOutputGetsTheSentencesInOrderAsTheyAreDecoded) {
  const std::string dir = tts::test::fresh_dir("synthesize_stream_stdout");
  const std::string checkpoint = never_stopping_checkpoint(dir);
  {
    std::ofstream lines(dir + "/lines.txt");
    lines << "Printing, in the only sense.\n\nWith which we are at present concerned.\n";
  }
  const std::string base = std::string(TTS_CLI_PATH) + " synthesize --checkpoint " + checkpoint +
                           " --text-file " + dir + "/lines.txt";
  // Spoken whole into files, then streamed as one whole chunk each: the same samples.
  ASSERT_EQ(run_shell(base + " --out " + dir + "/whole 2>/dev/null").exit_code, 0);
  const tts::test::CliResult streamed = run_shell(base + " --stream --chunk whole --out - > " +
                                                  dir + "/out.wav 2> " + dir + "/log.txt");
  ASSERT_EQ(streamed.exit_code, 0) << read_bytes(dir + "/log.txt");
  const std::string bytes = read_bytes(dir + "/out.wav");
  ASSERT_GT(bytes.size(), 44u);
  EXPECT_EQ(bytes.substr(0, 4), "RIFF");
  EXPECT_EQ(bytes.substr(8, 8), "WAVEfmt ");
  EXPECT_EQ(u32(bytes, 40), 0xFFFFFFFFu) << "a pipe's WAV says 'until the end'";
  std::vector<int16_t> expected = wav_samples(dir + "/whole/1.wav");
  const std::vector<int16_t> second = wav_samples(dir + "/whole/3.wav");
  ASSERT_FALSE(expected.empty());
  expected.insert(expected.end(), second.begin(), second.end());
  EXPECT_EQ(samples_of(bytes, 44), expected);
  const std::string log = read_bytes(dir + "/log.txt");
  EXPECT_NE(log.find("first audio after"), std::string::npos) << log;
  EXPECT_NE(log.find("real-time factor"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(dir + "/-"));

  // Chunks of Griffin-Lim: as long, heard sooner; raw samples with --format pcm16.
  ASSERT_EQ(run_shell(base + " --stream --chunk 3:8 --format pcm16 --out - > " + dir +
                      "/out.pcm 2>/dev/null")
                .exit_code,
            0);
  EXPECT_EQ(read_bytes(dir + "/out.pcm").size(), expected.size() * 2);
}

TEST(SynthesizeStream, AFileGrowsAndGetsItsSizesAtTheEnd) {
  const std::string dir = tts::test::fresh_dir("synthesize_stream_file");
  const std::string checkpoint = never_stopping_checkpoint(dir);
  const std::string base = "synthesize --checkpoint " + checkpoint + " --text \"Printing.\"";
  ASSERT_EQ(run_cli(base + " --out " + dir + "/whole.wav").exit_code, 0);
  // A symbolic link planted where the stream goes is replaced; what it points at stays.
  {
    std::ofstream outside(dir + "/outside.txt");
    outside << "outside";
  }
  fs::create_symlink(dir + "/outside.txt", dir + "/streamed.wav");
  const tts::test::CliResult result =
      run_cli(base + " --stream --chunk 2:4 --out " + dir + "/streamed.wav", true);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("streamed: first audio after"), std::string::npos) << result.output;
  const std::string bytes = read_bytes(dir + "/streamed.wav");
  EXPECT_EQ(u32(bytes, 40), bytes.size() - 44);
  EXPECT_EQ(u32(bytes, 4), bytes.size() - 8);
  tts::config::Config config = tts::config::load_config(kTiny);
  const std::vector<float> read = tts::audio::read_audio(dir + "/streamed.wav", config.audio);
  EXPECT_EQ(read.size(), wav_samples(dir + "/whole.wav").size());
  EXPECT_TRUE(fs::exists(dir + "/streamed.mel.npy"));
  EXPECT_FALSE(fs::is_symlink(dir + "/streamed.wav"));
  EXPECT_EQ(read_bytes(dir + "/outside.txt"), "outside");
}

TEST(SynthesizeStream, WhatCannotWorkIsRefusedBeforeAnythingLoads) {
  const std::string dir = tts::test::fresh_dir("synthesize_stream_refused");
  const std::string base = "synthesize --checkpoint " + dir + "/missing.pt --text \"Hello.\"";
  const tts::test::CliResult no_stream = run_cli(base + " --out -", true);
  EXPECT_EQ(no_stream.exit_code, 2) << no_stream.output;
  EXPECT_NE(no_stream.output.find("add --stream"), std::string::npos) << no_stream.output;
  const tts::test::CliResult pcm =
      run_cli(base + " --stream --format pcm16 --out " + dir + "/a.wav", true);
  EXPECT_EQ(pcm.exit_code, 2) << pcm.output;
  EXPECT_NE(pcm.output.find("--format pcm16 is for --stream --out -"), std::string::npos);
  const tts::test::CliResult format = run_cli(base + " --stream --format mp3 --out -", true);
  EXPECT_EQ(format.exit_code, 2) << format.output;
  const tts::test::CliResult chunk = run_cli(base + " --stream --chunk 9:3 --out -", true);
  EXPECT_EQ(chunk.exit_code, 2) << chunk.output;
  EXPECT_NE(chunk.output.find("MOST >= FIRST"), std::string::npos) << chunk.output;
}
