// r9y9/wavenet_vocoder conversion: what import_r9y9 reads from its files, what it refuses
// (naming the key), export -> import bit for bit, and r9y9's own code loading our export.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>

#include "../../support/peer_python.h"
#include "tts/core/error.h"
#include "tts/formats/npy.h"
#include "tts/formats/torch_file.h"
#include "tts/models/wavenet/conversion/r9y9.h"
#include "tts/models/wavenet/layers/network.h"
#include "tts/models/wavenet/layers/parameter_count.h"
#include "wavenet_fixture.h"

namespace fs = std::filesystem;
namespace fx = wavenet_fixture;
using namespace tts::wavenet;

namespace {

std::string temp_path(const std::string& name) {
  fs::create_directories(TTS_TEST_TMP_DIR);
  return std::string(TTS_TEST_TMP_DIR) + "/" + name;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const tts::Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The fixture's hparams with `key`'s value (a JSON literal) replaced, written to a scratch file.
std::string edited_hparams(const std::string& name, const std::string& key,
                           const std::string& value) {
  std::string text = read_text(fx::path(name, "_hparams.json"));
  const std::regex entry("\"" + key + "\": [^,\\n]+");
  EXPECT_TRUE(std::regex_search(text, entry)) << key;
  text = std::regex_replace(text, entry, "\"" + key + "\": " + value,
                            std::regex_constants::format_first_only);
  const std::string path = temp_path(name + "_" + key + "_hparams.json");
  std::ofstream(path) << text;
  return path;
}

TEST(R9y9, ImportReadsHparamsAndStep) {
  WavenetImport imported =
      import_r9y9(fx::path("wavenet_normal", ".pth"), fx::path("wavenet_normal", "_hparams.json"));
  const auto& w = imported.wavenet;
  EXPECT_EQ(w.output_distribution, tts::config::WavenetOutput::kNormal);
  EXPECT_EQ(w.out_channels, 6);
  EXPECT_EQ(w.layers, 5);
  EXPECT_EQ(w.stacks, 1);
  EXPECT_EQ(w.kernel_size, 2);
  EXPECT_EQ(w.cin_pad, 1);
  EXPECT_EQ(w.upsample_scales, (std::vector<int>{2, 3, 5}));
  EXPECT_EQ(w.freq_axis_kernel_size, 3);
  EXPECT_EQ(w.gin_channels, 8);
  EXPECT_EQ(w.n_speakers, 3);
  EXPECT_TRUE(w.use_speaker_embedding);
  EXPECT_EQ(w.log_scale_min, -7.0);
  EXPECT_EQ(imported.audio.n_mels, 20);
  EXPECT_EQ(imported.audio.hop_length, 30);
  EXPECT_EQ(imported.audio.n_fft, 120);
  EXPECT_EQ(imported.audio.sample_rate, 22050);
  EXPECT_EQ(imported.audio.fmin, 125);
  EXPECT_EQ(imported.audio.fmax, 7600);
  EXPECT_EQ(imported.audio.preemphasis, 0.85);  // mol_wavenet.json's preprocess
  EXPECT_EQ(imported.global_step, 1234);
}

TEST(R9y9, ImportRefusesShapesTheHparamsDoNotGive) {
  // The checkpoint has 16 residual channels; these hparams say 24.
  const std::string hparams = edited_hparams("wavenet", "residual_channels", "24");
  const std::string message = error_of([&] { import_r9y9(fx::path("wavenet", ".pth"), hparams); });
  EXPECT_NE(message.find("conv_layers.0.conv.weight_v"), std::string::npos) << message;
  EXPECT_NE(message.find("residual_channels"), std::string::npos) << message;
  EXPECT_NE(message.find("wavenet.pth"), std::string::npos) << message;
  // Fewer layers than the file: its extra layers are named (the first eight, then a count).
  const std::string fewer = edited_hparams("wavenet", "layers", "4");
  const std::string layers = error_of([&] { import_r9y9(fx::path("wavenet", ".pth"), fewer); });
  EXPECT_NE(layers.find("not in the model: conv_layers.4.conv.bias"), std::string::npos) << layers;
  EXPECT_NE(layers.find("and 14 more"), std::string::npos) << layers;
}

TEST(R9y9, ImportRefusesAbsurdOrUnsupportedHparams) {
  const std::string pth = fx::path("wavenet", ".pth");
  for (const auto& [key, value, expected] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"layers", "100000000", "'layers' is 100000000"},
           {"residual_channels", "-3", "'residual_channels' is -3"},
           {"gate_channels", "\"many\"", "'gate_channels' must be an integer"},
           {"kernel_size", "1e9", "'kernel_size'"},
           {"input_type", "\"mulaw-quantize\"", "only raw is supported"},
           {"upsample_net", "\"UpsampleNetwork\"", "ConvInUpsampleNetwork"},
           {"hop_size", "255", "hop size is 255"},
           {"cin_channels", "40", "'cin_channels' is 40"},
           {"stacks", "4", "wavenet.stacks"},
       }) {
    const std::string hparams = edited_hparams("wavenet", key, value);
    const std::string message = error_of([&] { import_r9y9(pth, hparams); });
    EXPECT_NE(message.find(expected), std::string::npos) << key << ": " << message;
    EXPECT_NE(message.find(hparams), std::string::npos) << key << ": " << message;
  }
  const std::string deep = temp_path("deep_hparams.json");
  std::ofstream(deep) << std::string(100000, '[') << std::string(100000, ']');
  EXPECT_NE(error_of([&] { import_r9y9(pth, deep); }).find("nest deeper"), std::string::npos);
}

TEST(R9y9, ImportReadsBareAndPrefixedStateDicts) {
  fx::Fixture f = fx::load("wavenet");
  std::vector<std::pair<std::string, std::shared_ptr<tts::formats::PickleValue>>> entries;
  for (const auto& [name, tensor] : f.imported.tensors) {
    entries.emplace_back("module." + name, tts::formats::pickle_tensor(tensor));
  }
  const std::string bare = temp_path("bare_prefixed.pth");
  tts::formats::write_torch_file(bare, *tts::formats::pickle_dict(entries));
  WavenetImport imported = import_r9y9(bare, fx::path("wavenet", "_hparams.json"));
  ASSERT_EQ(imported.tensors.size(), f.imported.tensors.size());
  for (const auto& [name, tensor] : f.imported.tensors) {
    EXPECT_TRUE(torch::equal(imported.tensors.at(name), tensor)) << name;
  }
}

TEST(R9y9, ExportThenImportIsBitForBit) {
  for (const std::string& name : fx::names()) {
    fx::Fixture f = fx::load(name);
    const std::string pth = temp_path(name + "_export.pth");
    const std::string json = temp_path(name + "_export.json");
    export_r9y9(pth, json, f.imported.wavenet, f.imported.audio, wavenet_state_dict(*f.model), 77);
    WavenetImport again = import_r9y9(pth, json);
    EXPECT_EQ(again.global_step, 77);
    EXPECT_EQ(tts::config::WavenetOptions(again.wavenet).upsample_scales,
              f.imported.wavenet.upsample_scales);
    EXPECT_EQ(again.wavenet.out_channels, f.imported.wavenet.out_channels);
    EXPECT_EQ(again.wavenet.gin_channels, f.imported.wavenet.gin_channels);
    EXPECT_EQ(again.wavenet.log_scale_min, f.imported.wavenet.log_scale_min);
    EXPECT_EQ(again.audio.hop_length, f.imported.audio.hop_length);
    EXPECT_EQ(again.audio.fmax, f.imported.audio.fmax);
    ASSERT_EQ(again.tensors.size(), f.imported.tensors.size()) << name;
    for (const auto& [key, tensor] : f.imported.tensors) {
      EXPECT_TRUE(torch::equal(again.tensors.at(key), tensor)) << name << " " << key;
    }
  }
}

// r9y9's own WaveNet loads our export strictly and computes what ours does.
TEST(R9y9, R9y9LoadsOurExportStrictly) {
  const char* checkout = std::getenv("TTS_WAVENET_VOCODER_DIR");
  if (checkout == nullptr || !fs::exists(fs::path(checkout) / "wavenet_vocoder" / "wavenet.py")) {
    GTEST_SKIP() << "set TTS_WAVENET_VOCODER_DIR to a checkout of r9y9/wavenet_vocoder to run "
                    "its code on our export";
  }
  const std::string python = tts::test::peer_python();
  if (std::system((python + " -c 'import torch, numpy' >/dev/null 2>&1").c_str()) != 0) {
    GTEST_SKIP() << python << " with torch and numpy is needed to run r9y9's code";
  }
  for (const std::string& name : fx::names()) {
    fx::Fixture f = fx::load(name);
    // Other weights than the fixture's, so the check is of our export, not of the fixture file.
    {
      torch::NoGradGuard no_grad;
      for (auto& p : f.model->parameters()) p.add_(0.01 * torch::randn_like(p));
    }
    const std::string pth = temp_path(name + "_r9y9.pth");
    const std::string json = temp_path(name + "_r9y9.json");
    export_r9y9(pth, json, f.imported.wavenet, f.imported.audio, wavenet_state_dict(*f.model));
    const std::string out = temp_path(name + "_r9y9_y.npy");
    std::string command =
        fmt::format("{} {}/vocoders/r9y9_load.py {} {} {} {} {} {}", python, TTS_TEST_DATA_DIR,
                    checkout, pth, json, fx::path(name, "_x.npy"), fx::path(name, "_c.npy"), out);
    if (f.g.defined()) command += " " + fx::path(name, "_g.npy");
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
    torch::NoGradGuard no_grad;
    EXPECT_LE(fx::max_abs(fx::npy(out), f.model->forward(f.x, f.c, f.g)), 1e-5) << name;
  }
}

}  // namespace

TEST(R9y9, HparamsAreReadAsJsonWithinBounds) {
  // YAML aliases are no JSON; a network past the parameter budget is refused by its figure.
  const std::string aliases = temp_path("alias_hparams.json");
  std::ofstream(aliases) << "{\"layers\": &a [1, [*a, *a]], \"stacks\": *a}";
  EXPECT_NE(error_of([&] { read_r9y9_hparams(aliases); }).find("not valid JSON"),
            std::string::npos);
  std::string text = read_text(fx::path("wavenet", "_hparams.json"));
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"\"residual_channels\": 16", "\"residual_channels\": 8192"},
           {"\"gate_channels\": 32", "\"gate_channels\": 8192"},
           {"\"skip_out_channels\": 16", "\"skip_out_channels\": 8192"}}) {
    text.replace(text.find(from), from.size(), to);
  }
  const std::string huge = temp_path("huge_hparams.json");
  std::ofstream(huge) << text;
  const std::string e = error_of([&] { read_r9y9_hparams(huge); });
  EXPECT_NE(e.find("huge_hparams.json"), std::string::npos) << e;
  EXPECT_NE(e.find("past the limit"), std::string::npos) << e;
}

TEST(R9y9, AWindowOfPartFramesIsCutToWholeFrames) {
  // r9y9 trains hop 200 with max_time_steps 10240 (51.2 frames): cut to 51 frames.
  std::string text = read_text(fx::path("wavenet", "_hparams.json"));
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"\"hop_size\": 256", "\"hop_size\": 200"},
           {"\"win_length\": 1024", "\"win_length\": 800"},
           {"   4,\n   4,\n   4,\n   4\n", "   5,\n   5,\n   4,\n   2\n"}}) {
    const size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  }
  const std::string path = temp_path("hop200_hparams.json");
  std::ofstream(path) << text;
  const R9y9Hparams h = read_r9y9_hparams(path);
  EXPECT_EQ(h.audio.hop_length, 200);
  EXPECT_EQ(h.wavenet.max_time_steps, 10200);
}

TEST(R9y9, TheParameterCountFromTheHparamsIsTheBuiltNetworks) {
  for (const char* name : {"wavenet", "wavenet_normal", "wavenet_logistic"}) {
    R9y9Hparams h = read_r9y9_hparams(fx::path(name, "_hparams.json"));
    for (bool embedding : {true, false}) {
      h.wavenet.use_speaker_embedding = embedding;
      WaveNet network(h.wavenet, h.audio.n_mels);
      int64_t built = 0;
      for (const torch::Tensor& p : network->parameters()) built += p.numel();
      EXPECT_EQ(parameter_count(h.wavenet, h.audio.n_mels), static_cast<double>(built)) << name;
    }
  }
}

TEST(R9y9, AWeightThatIsNotFiniteIsRefusedByName) {
  fx::Fixture f = fx::load("wavenet");
  std::vector<std::pair<std::string, std::shared_ptr<tts::formats::PickleValue>>> entries;
  for (const auto& [name, tensor] : f.imported.tensors) {
    torch::Tensor stored = tensor.clone();
    if (name == "first_conv.bias") stored.view({-1})[2] = INFINITY;
    entries.emplace_back(name, tts::formats::pickle_tensor(stored));
  }
  const std::string path = temp_path("infinite.pth");
  tts::formats::write_torch_file(
      path, *tts::formats::pickle_dict({{"state_dict", tts::formats::pickle_dict(entries)}}));
  const std::string e = error_of([&] { import_r9y9(path, fx::path("wavenet", "_hparams.json")); });
  EXPECT_NE(e.find("tensor 'first_conv.bias' holds 1 non-finite value"), std::string::npos) << e;
  EXPECT_NE(e.find(path), std::string::npos) << e;
}
