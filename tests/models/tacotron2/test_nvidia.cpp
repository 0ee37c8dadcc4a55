// NVIDIA/tacotron2 conversion: its checkpoint imported computes its outputs (parity), the
// round trip import -> export -> import, the layouts it may come in, and every refusal.
#include <gtest/gtest.h>
#include <torch/serialize.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>

#include "nvidia_fixture.h"
#include "tts/checkpoint/checkpoint.h"
#include "tts/checkpoint/state_dict_keys.h"
#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/formats/torch_file.h"
#include "tts/models/tacotron2/conversion/nvidia.h"
#include "tts/models/tacotron2/layers/network.h"
#include "tts/text/symbols.h"

namespace fs = std::filesystem;
using namespace tts::checkpoint;
using namespace tts::tacotron2;
namespace fx = nvidia_fixture;

namespace {

std::string temp_path(const std::string& name) {
  fs::create_directories(TTS_TEST_TMP_DIR);
  return std::string(TTS_TEST_TMP_DIR) + "/" + name;
}

// The fixture's state dict (NVIDIA's names) read back with our reader.
std::vector<std::pair<std::string, torch::Tensor>> fixture_state_dict() {
  tts::formats::PickleValue root = tts::formats::read_torch_file(fx::kCheckpoint);
  const tts::formats::PickleValue* dict = root.find("state_dict");
  EXPECT_NE(dict, nullptr);
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& [key, value] : dict->entries) out.emplace_back(key->text, value->tensor);
  return out;
}

// Writes `tensors` as a bare state dict (a plain dict; torch.load reads it as one) with `prefix`.
std::string write_state_dict(const std::string& name,
                             const std::vector<std::pair<std::string, torch::Tensor>>& tensors,
                             const std::string& prefix = "") {
  c10::Dict<std::string, at::Tensor> dict;
  for (const auto& [key, tensor] : tensors) dict.insert(prefix + key, tensor);
  std::vector<char> bytes = torch::pickle_save(c10::IValue(dict));
  std::string path = temp_path(name);
  tts::write_file_atomic(path, std::string(bytes.begin(), bytes.end()));
  return path;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const tts::Error& e) {
    return e.what();
  }
  return "(no error)";
}

void expect_same_tensors(const Checkpoint& a, const Checkpoint& b) {
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    EXPECT_EQ(a.tensors[i].first, b.tensors[i].first);
    EXPECT_TRUE(torch::equal(a.tensors[i].second, b.tensors[i].second)) << a.tensors[i].first;
  }
  EXPECT_EQ(a.parameter_names, b.parameter_names);
}

}  // namespace

TEST(NvidiaNames, MapOursOntoNvidiasModelPy) {
  EXPECT_EQ(nvidia_name("encoder.conv2.weight"), "encoder.convolutions.2.0.conv.weight");
  EXPECT_EQ(nvidia_name("encoder.norm0.running_var"), "encoder.convolutions.0.1.running_var");
  EXPECT_EQ(nvidia_name("decoder.prenet.layer1.weight"),
            "decoder.prenet.layers.1.linear_layer.weight");
  EXPECT_EQ(nvidia_name("decoder.attention_layer.location_conv.weight"),
            "decoder.attention_layer.location_layer.location_conv.conv.weight");
  EXPECT_EQ(nvidia_name("decoder.gate_layer.bias"), "decoder.gate_layer.linear_layer.bias");
  EXPECT_EQ(nvidia_name("decoder.decoder_rnn.weight_hh"), "decoder.decoder_rnn.weight_hh");
  EXPECT_EQ(nvidia_name("postnet.norm4.num_batches_tracked"),
            "postnet.convolutions.4.1.num_batches_tracked");
  EXPECT_EQ(nvidia_name("linear_head.output.weight"), "");
}

TEST(NvidiaImport, FixtureComputesNvidiasOutputs) {
  tts::config::Config config = fx::config();
  Checkpoint checkpoint = import_nvidia(fx::kCheckpoint, config);
  tts::tacotron2::Tacotron2 model(config.model, 148, 80, 0);
  restore_model(checkpoint, *model, fx::kCheckpoint);
  model->eval();
  torch::NoGradGuard no_grad;
  torch::Tensor text = fx::array("text").to(torch::kInt64);
  torch::Tensor text_lengths = fx::array("input_lengths").to(torch::kInt64);
  torch::Tensor mels = fx::array("mels").transpose(1, 2).contiguous();  // [B, T, n_mels]
  torch::Tensor mel_lengths = fx::array("output_lengths").to(torch::kInt64);
  tts::tacotron2::TacotronOutput out = model->forward(text, text_lengths, mels, mel_lengths);

  // The measured errors go to the test report (--gtest_output=xml) for docs and reviews.
  auto check = [](const char* what, const torch::Tensor& ours, const torch::Tensor& reference) {
    double error = fx::relative_error(ours, reference);
    RecordProperty(std::string(what) + "_relative_error", fmt::format("{:.3g}", error));
    EXPECT_LE(error, 1e-5) << what;
  };
  check("mel", out.mel.transpose(1, 2), fx::array("expected_mel"));
  check("mel_postnet", out.mel_postnet.transpose(1, 2), fx::array("expected_mel_postnet"));
  check("alignments", out.alignments, fx::array("expected_alignments"));
  // NVIDIA sets the gate to 1e3 past the lengths (ours leaves the logits: the loss masks them);
  // compare the frames that count.
  torch::Tensor valid = tts::tacotron2::padding_mask(mel_lengths, mels.size(1)).logical_not();
  torch::Tensor expected_gate = fx::array("expected_gate");
  EXPECT_TRUE(expected_gate.masked_select(valid.logical_not()).eq(1e3).all().item<bool>());
  check("gate", out.gate.masked_select(valid), expected_gate.masked_select(valid));
}

TEST(NvidiaImport, TakesNvidiasIterationAndDumpsTheConfig) {
  tts::config::Config config = fx::config();
  Checkpoint checkpoint = import_nvidia(fx::kCheckpoint, config);
  EXPECT_EQ(checkpoint.state.step, 0);
  EXPECT_TRUE(checkpoint.optimizers.empty());
  EXPECT_EQ(tts::config::parse_config(checkpoint.config_yaml, "imported"), config);
  EXPECT_EQ(checkpoint.tensors.size(), fixture_state_dict().size());
}

TEST(NvidiaExport, RoundTripGivesIdenticalTensors) {
  tts::config::Config config = fx::config();
  Checkpoint imported = import_nvidia(fx::kCheckpoint, config);
  std::string out = temp_path("roundtrip_nvidia.pt");
  std::string hparams = export_nvidia(imported, out);
  EXPECT_NE(hparams.find("n_symbols=148"), std::string::npos) << hparams;
  EXPECT_NE(hparams.find("decoder_rnn_dim=64,"), std::string::npos) << hparams;
  expect_same_tensors(imported, import_nvidia(out, config));
  // The file holds exactly NVIDIA's names and shapes, as its load_state_dict(strict=True) wants.
  tts::formats::PickleValue exported = tts::formats::read_torch_file(out);
  ASSERT_NE(exported.find("state_dict"), nullptr);
  std::map<std::string, std::vector<int64_t>> theirs, ours;
  for (const auto& [name, tensor] : fixture_state_dict()) theirs[name] = tensor.sizes().vec();
  for (const auto& [key, value] : exported.find("state_dict")->entries) {
    ours[key->text] = value->tensor.sizes().vec();
  }
  EXPECT_EQ(ours, theirs);
  EXPECT_EQ(exported.find("iteration")->integer, 0);
}

TEST(NvidiaImport, ReadsBareAndDdpPrefixedStateDicts) {
  tts::config::Config config = fx::config();
  Checkpoint reference = import_nvidia(fx::kCheckpoint, config);
  auto tensors = fixture_state_dict();
  expect_same_tensors(reference, import_nvidia(write_state_dict("bare.pt", tensors), config));
  expect_same_tensors(reference,
                      import_nvidia(write_state_dict("ddp.pt", tensors, "module."), config));
}

TEST(NvidiaImport, ListsMissingAndUnexpectedNames) {
  auto tensors = fixture_state_dict();
  std::string missing_name = tensors.back().first;
  tensors.pop_back();
  tensors.emplace_back("decoder.extra_layer.weight", torch::zeros({2}));
  std::string message =
      error_of([&] { import_nvidia(write_state_dict("missing.pt", tensors), fx::config()); });
  EXPECT_NE(message.find("missing: " + missing_name), std::string::npos) << message;
  EXPECT_NE(message.find("not in the model: decoder.extra_layer.weight"), std::string::npos)
      << message;
}

TEST(NvidiaImport, ShapeMismatchNamesTheConfigKeyThatWouldFit) {
  auto config = tts::config::load_config(fx::kConfig, {"model.decoder_rnn_dim=512"});
  std::string message = error_of([&] { import_nvidia(fx::kCheckpoint, config); });
  EXPECT_NE(message.find("NVIDIA/tacotron2 file '" + std::string(fx::kCheckpoint) +
                         "' does not fit the model of the config (missing: none; shape differs: "),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("; fix the config: model.decoder_rnn_dim is 512 but the checkpoint's "
                         "decoder.decoder_rnn.weight_hh has 256 rows: use 64"),
            std::string::npos)
      << message;

  config = tts::config::load_config(fx::kConfig, {"text.symbol_set=english"});
  message = error_of([&] { import_nvidia(fx::kCheckpoint, config); });
  EXPECT_NE(message.find("embedding.weight has 148 rows: use nvidia"), std::string::npos)
      << message;

  config = tts::config::load_config(fx::kConfig, {"model.attention_location_kernel_size=31"});
  message = error_of([&] { import_nvidia(fx::kCheckpoint, config); });
  EXPECT_NE(message.find("model.attention_location_kernel_size is 31 but the checkpoint's "
                         "decoder.attention_layer.location_layer.location_conv.conv.weight has 7 "
                         "kernel taps: use 7"),
            std::string::npos)
      << message;

  config = tts::config::load_config(fx::kConfig, {"model.postnet_n_convolutions=3"});
  message = error_of([&] { import_nvidia(fx::kCheckpoint, config); });
  EXPECT_NE(message.find("model.postnet_n_convolutions is 3 but the checkpoint has 5 such "
                         "layers: use 5"),
            std::string::npos)
      << message;
}

// Keys are read by hand: a 1 MB key (which overflowed libstdc++'s recursive regex matcher) and a
// 20-digit layer index (std::stoll's out_of_range) are clear errors naming the file.
TEST(NvidiaImport, HostileKeysAreClearErrors) {
  auto tensors = fixture_state_dict();
  tensors.emplace_back("encoder.convolutions." + std::string(1 << 20, '7') + ".x",
                       torch::zeros({1}));
  std::string path = write_state_dict("long_key.pt", tensors);
  std::string message = error_of([&] { import_nvidia(path, fx::config()); });
  EXPECT_NE(message.find("'" + path + "': the state dict has a key of 1048599 bytes"),
            std::string::npos)
      << message.substr(0, 300);
  tensors.back().first = "postnet.convolutions.12345678901234567890.0.conv.weight";
  path = write_state_dict("layer_index.pt", tensors);
  message = error_of([&] { import_nvidia(path, fx::config()); });
  EXPECT_NE(message.find("'" + path +
                         "': the state dict names layer 'postnet.convolutions."
                         "12345678901234567890.0.conv.weight' with an index past 9999"),
            std::string::npos)
      << message;
}

TEST(NvidiaKeys, LayerCountsReadTheIndexBeforeADot) {
  const std::vector<std::string> names{"encoder.convolutions.0.0.conv.weight",
                                       "encoder.convolutions.2.1.bias",
                                       "encoder.convolutions.x.0.conv.weight",
                                       "encoder.convolutions.7",
                                       "encoder.convolutions..1",
                                       "postnet.convolutions.4.0.conv.weight"};
  EXPECT_EQ(layer_count(names, "encoder.convolutions.", "f.pt"), 3);
  EXPECT_EQ(layer_count(names, "postnet.convolutions.", "f.pt"), 5);
  EXPECT_EQ(layer_count(names, "decoder.prenet.layers.", "f.pt"), 0);
  EXPECT_NO_THROW(check_state_dict_key(std::string(kMaxStateDictKeyBytes, 'k'), "f.pt"));
  EXPECT_THROW(check_state_dict_key(std::string(kMaxStateDictKeyBytes + 1, 'k'), "f.pt"),
               tts::Error);
  for (const char* bad : {"", "a..b", "a.", "a b.c", "a.10000.b", "a/../b"}) {
    EXPECT_THROW(check_state_dict_key(bad, "f.pt"), tts::Error) << bad;
  }
  EXPECT_NO_THROW(check_state_dict_key("module.encoder.convolutions.9999.0.conv.weight", "f.pt"));
}

TEST(NvidiaImport, LegacyFormatIsRefusedWithTheResaveCommand) {
  // The legacy format starts with a pickled magic number (protocol 2), not a zip header.
  std::string path = temp_path("legacy.pt");
  tts::write_file_atomic(path,
                         std::string("\x80\x02\x8a\x0al\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.", 16));
  std::string message = error_of([&] { import_nvidia(path, fx::config()); });
  EXPECT_NE(message.find("legacy torch.save format"), std::string::npos) << message;
  EXPECT_NE(message.find("torch.save(torch.load('" + path +
                         "', map_location='cpu'), "
                         "'resaved.pt')"),
            std::string::npos)
      << message;
}

TEST(NvidiaImport, RefusesALinearHeadAndOurOwnCheckpoints) {
  auto config = tts::config::load_config(fx::kConfig, {"model.predict_linear=true"});
  EXPECT_THROW(import_nvidia(fx::kCheckpoint, config), tts::UsageError);
  tts::config::Config fixture = fx::config();
  std::string ours = temp_path("ours.pt");
  export_nvidia(import_nvidia(fx::kCheckpoint, fixture), ours);
  std::string dir = temp_path("ours_run");
  fs::remove_all(dir);
  std::string saved = save_checkpoint(dir, import_nvidia(ours, fixture), 1);
  // What --init-from tells apart, by the format tag of the one read of the file.
  EXPECT_NE(tts::formats::read_torch_file(saved).find("format"), nullptr);
  EXPECT_EQ(tts::formats::read_torch_file(fx::kCheckpoint).find("format"), nullptr);
  std::string message = error_of([&] { import_nvidia(saved, fixture); });
  EXPECT_NE(message.find("is a tts-train checkpoint"), std::string::npos) << message;
}

TEST(NvidiaExport, RefusesWhatNvidiasCodeCannotExpress) {
  for (const char* override :
       {"model.n_frames_per_step=2", "model.predict_linear=true", "text.symbol_set=english",
        // r 1 in force, but a decoder built for r up to 3
        "train.r_schedule=[[0, 1, 4], [100, 3, 4]]"}) {
    tts::config::Config config = tts::config::load_config(fx::kConfig, {override});
    tts::tacotron2::Tacotron2 model(config.model, tts::text::symbol_count(config.text.symbol_set),
                                    80, config.audio.n_linear());
    Checkpoint checkpoint = capture(*model, {}, {}, tts::config::dump_config(config));
    std::string message = "(no error)";
    try {
      export_nvidia(checkpoint, temp_path("refused.pt"));
    } catch (const tts::UsageError& e) {
      message = e.what();
    }
    std::string key = std::string(override).substr(0, std::string(override).find('='));
    EXPECT_NE(message.find(key), std::string::npos) << override << ": " << message;
    EXPECT_NE(message.find("NVIDIA"), std::string::npos) << message;
    EXPECT_FALSE(fs::exists(temp_path("refused.pt")));
  }
}
