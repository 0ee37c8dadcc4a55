// Hostile inputs of the vocoders' commands through the real CLI: the peers' JSON settings read as
// JSON (bombs refused by name, real files with windows of part frames accepted), configs past the
// parameter budget or asking for more weights than their checkpoint holds refused before
// anything is built, every mel checked before vocode writes anything, and a checkpoint's symbols
// printed without their control characters.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>

#include "../models/tacotron2/nvidia_fixture.h"
#include "../support/scratch.h"
#include "cli_test_util.h"
#include "tts/checkpoint/checkpoint.h"
#include "tts/config/config.h"
#include "tts/formats/npy.h"
#include "tts/models/hifigan/conversion/jik876.h"
#include "tts/models/hifigan/layers/generator.h"
#include "tts/models/wavenet/conversion/r9y9.h"
#include "tts/models/wavenet/layers/network.h"

namespace fs = std::filesystem;
using tts::test::CliResult;
using tts::test::run_cli;

namespace {

const std::string kVocoders = std::string(TTS_TEST_DATA_DIR) + "/vocoders";
const std::string kGenerator = kVocoders + "/shared/hifigan_g.pt";
const std::string kConfigJson = kVocoders + "/shared/hifigan_config.json";

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// `text` with each (from, to) replaced once.
std::string edited(std::string text,
                   const std::vector<std::pair<std::string, std::string>>& edits) {
  for (const auto& [from, to] : edits) {
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
  }
  return text;
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// jik876's shared fixture as our checkpoint.
std::string converted_vocoder(const std::string& dir) {
  const std::string out = dir + "/vocoder.pt";
  CliResult r = run_cli(
      "convert --from hifigan " + kGenerator + " --hparams " + kConfigJson + " --out " + out, true);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return out;
}

// A mel [frames, 80] of `value`s.
std::string mel_file(const std::string& path, int64_t frames, float value) {
  std::vector<float> data(static_cast<size_t>(frames * 80), value);
  tts::formats::write_npy(path, data.data(), {frames, 80});
  return path;
}

}  // namespace

TEST(UntrustedVocoderInputs, JsonBombsAreRefusedByNameWithoutACrash) {
  const std::string dir = tts::test::fresh_dir("json_bombs");
  // About 900 kB of aliased nested lists (450,000 levels once yaml-cpp resolves them), and the
  // same depth written out.
  std::string aliases = "{\"resblock\": \"1\", \"upsample_rates\": &a0 [1]";
  for (int i = 1; aliases.size() < 900000; ++i) {
    aliases += ", \"k" + std::to_string(i) + "\": &a" + std::to_string(i) + " [*a" +
               std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + "]";
  }
  write(dir + "/aliases.json", aliases + "}");
  write(dir + "/deep.json",
        "{\"seed\": " + std::string(450000, '[') + std::string(450000, ']') + "}");
  write(dir + "/big.json", "{\"seed\": [" + std::string(2 << 20, ' ') + "]}");
  for (const char* bomb : {"/aliases.json", "/deep.json", "/big.json"}) {
    for (const std::string& command :
         {"convert --from hifigan " + kGenerator + " --hparams ",
          "convert --from wavenet " + kVocoders + "/wavenet.pth --hparams "}) {
      CliResult r = run_cli(command + dir + bomb + " --out " + dir + "/out.pt", true);
      EXPECT_EQ(r.exit_code, 1) << command << bomb << ": " << r.output;
      EXPECT_NE(r.output.find(dir + bomb), std::string::npos) << r.output;
      EXPECT_EQ(r.output.find("unexpected failure"), std::string::npos) << r.output;
    }
  }
  EXPECT_FALSE(fs::exists(dir + "/out.pt"));
}

TEST(UntrustedVocoderInputs, ThePeersFilesWithWindowsOfPartFramesAreAccepted) {
  const std::string dir = tts::test::fresh_dir("hop200");
  // jik876: hop 200, segment_size 8192 (40.96 frames).
  const std::string config_json =
      edited(read_text(kConfigJson), {{"\"hop_size\": 256", "\"hop_size\": 200"},
                                      {"\"win_size\": 1024", "\"win_size\": 800"},
                                      {"  8,\n  8,\n  4\n", "  10, 5, 4\n"},
                                      {"  16,\n  16,\n  8\n", "  20, 11, 8\n"}});
  write(dir + "/hop200.json", config_json);
  const tts::config::Config config =
      tts::hifigan::hifigan_config_from_json(dir + "/hop200.json", {});
  tts::hifigan::Generator generator(config.hifigan, config.audio.n_mels);
  tts::hifigan::Jik876State state;
  for (const auto& p : generator->named_parameters()) state.generator[p.key()] = p.value();
  tts::hifigan::export_jik876(state, dir + "/jik876", config);
  write(dir + "/jik876/config.json", config_json);  // the original's, not our cut
  CliResult r = run_cli("convert --from hifigan " + dir + "/jik876/g_00000000 --hparams " + dir +
                            "/jik876/config.json --out " + dir + "/hifigan.pt",
                        true);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("segment_size is 8192 samples, not a whole number of 200-sample frames"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("cut to 8000 samples (40 frames)"), std::string::npos) << r.output;

  // r9y9: hop 200, max_time_steps 10240 (51.2 frames).
  const std::string hparams =
      edited(read_text(kVocoders + "/wavenet_hparams.json"),
             {{"\"hop_size\": 256", "\"hop_size\": 200"},
              {"\"win_length\": 1024", "\"win_length\": 800"},
              {"   4,\n   4,\n   4,\n   4\n", "   5,\n   5,\n   4,\n   2\n"}});
  write(dir + "/hop200_hparams.json", hparams);
  const tts::wavenet::R9y9Hparams h = tts::wavenet::read_r9y9_hparams(dir + "/hop200_hparams.json");
  tts::wavenet::WaveNet network(h.wavenet, h.audio.n_mels);
  fs::create_directories(dir + "/r9y9");
  tts::wavenet::export_r9y9(dir + "/r9y9/checkpoint.pth", dir + "/r9y9/hparams.json", h.wavenet,
                            h.audio, tts::wavenet::wavenet_state_dict(*network), 3);
  write(dir + "/r9y9/hparams.json", hparams);
  r = run_cli("convert --from wavenet " + dir + "/r9y9/checkpoint.pth --hparams " + dir +
                  "/r9y9/hparams.json --out " + dir + "/wavenet.pt",
              true);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("max_time_steps is 10240 samples"), std::string::npos) << r.output;
}

TEST(UntrustedVocoderInputs, ConfigsPastTheBudgetOrPastTheirWeightsAreRefusedBeforeBuilding) {
  const std::string dir = tts::test::fresh_dir("budget");
  // A config.json asking for a generator of about 100 GB.
  write(dir + "/huge.json",
        edited(read_text(kConfigJson),
               {{"\"upsample_initial_channel\": 64", "\"upsample_initial_channel\": 8192"},
                {"  3,\n  5,\n  7\n", "  255, 255, 255\n"}}));
  CliResult r = run_cli("convert --from hifigan " + kGenerator + " --hparams " + dir +
                            "/huge.json --out " + dir + "/x.pt",
                        true);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(dir + "/huge.json"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("past the limit"), std::string::npos) << r.output;

  // A checkpoint of a few values whose config asks for a generator of 0.3 GB: refused by vocode,
  // inspect and synthesize --vocoder before the generator is built.
  tts::checkpoint::Checkpoint checkpoint = tts::checkpoint::load_checkpoint(converted_vocoder(dir));
  tts::config::Config config = tts::checkpoint::checkpoint_config(checkpoint, "converted");
  config.hifigan.upsample_initial_channel = 2048;
  checkpoint.config_yaml = tts::config::dump_config(config);
  checkpoint.tensors = {{"generator.conv_pre.bias", torch::zeros({4})}};
  checkpoint.parameter_names = {"generator.conv_pre.bias"};
  checkpoint.optimizers.clear();
  const std::string small = dir + "/small.pt";
  tts::checkpoint::write_checkpoint(small, checkpoint);
  const std::string mel = mel_file(dir + "/mel.npy", 10, -5.0f);
  for (const std::string& command :
       {"vocode --checkpoint " + small + " --mel " + mel + " --out " + dir + "/a.wav",
        "inspect " + small}) {
    r = run_cli(command, true);
    EXPECT_EQ(r.exit_code, 1) << command << ": " << r.output;
    EXPECT_NE(r.output.find(small), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("holds 4 values in all"), std::string::npos) << r.output;
  }
  EXPECT_FALSE(fs::exists(dir + "/a.wav"));
}

TEST(UntrustedVocoderInputs, VocodeChecksEveryMelBeforeWritingAnything) {
  const std::string dir = tts::test::fresh_dir("vocode_mels");
  const std::string vocoder = converted_vocoder(dir);
  const std::string good = mel_file(dir + "/good.npy", 8, -5.0f);
  const std::string empty = mel_file(dir + "/empty.npy", 0, 0.0f);
  std::vector<float> data(8 * 80, -5.0f);
  data[3 * 80 + 7] = NAN;
  tts::formats::write_npy(dir + "/nan.npy", data.data(), {8, 80});
  for (const auto& [bad, expected] : std::vector<std::pair<std::string, std::string>>{
           {empty, "the mel has no frames"},
           {dir + "/nan.npy",
            "the mel holds 1 non-finite value (NaN or infinity), the first at frame 3, channel "
            "7"}}) {
    fs::remove_all(dir + "/out");
    CliResult r = run_cli("vocode --checkpoint " + vocoder + " --mel " + good + " --mel " + bad +
                              " --out " + dir + "/out",
                          true);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find(bad + ": " + expected), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("unexpected failure"), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(dir + "/out/good.wav")) << "a WAV was written before the check";
  }
  CliResult r =
      run_cli("vocode --checkpoint " + vocoder + " --mel " + good + " --out " + dir + "/out", true);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(dir + "/out/good.wav"));
}

TEST(UntrustedVocoderInputs, ACheckpointsSymbolsReachTheTerminalWithoutControlCharacters) {
  const std::string dir = tts::test::fresh_dir("escapes");
  const std::string imported = dir + "/imported.pt";
  CliResult r = run_cli("convert --from nvidia " + nvidia_fixture::kCheckpoint + " --config " +
                            nvidia_fixture::kConfig + " --out " + imported,
                        true);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  tts::checkpoint::Checkpoint checkpoint = tts::checkpoint::load_checkpoint(imported);
  ASSERT_GT(checkpoint.symbols.size(), 5u);
  checkpoint.symbols[5] = "\x1b]0;owned\x07\x1b[2J";
  const std::string hostile = dir + "/step_00000001.pt";
  tts::checkpoint::write_checkpoint(hostile, checkpoint);
  for (const std::string& command :
       {"synthesize --checkpoint " + hostile + " --text hello --out " + dir + "/a.wav",
        "inspect " + hostile}) {
    r = run_cli(command, true);
    EXPECT_EQ(r.output.find('\x1b'), std::string::npos) << command;
    EXPECT_EQ(r.output.find('\x07'), std::string::npos) << command;
    EXPECT_NE(r.output.find("\\x1b]0;owned\\x07\\x1b[2J"), std::string::npos) << r.output;
  }
  EXPECT_NE(run_cli("synthesize --checkpoint " + hostile + " --text hello --out " + dir + "/a.wav")
                .exit_code,
            0);
}
