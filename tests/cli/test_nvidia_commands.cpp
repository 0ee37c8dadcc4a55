// The NVIDIA/tacotron2 commands through the real CLI: convert (import, export, refusals, and the
// exported file loaded by Python's torch when the project's venv has it), train --init-from, and
// gta on the NVIDIA reference made into a feature store.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>

#include "../models/tacotron2/nvidia_fixture.h"
#include "cli_test_util.h"

namespace fs = std::filesystem;
namespace fx = nvidia_fixture;
using tts::test::run_cli;

namespace {

const std::string kPython = std::string(TTS_SOURCE_DIR) + "/.deps/torch-2.11.0/bin/python";

// name -> l2 of every tensor of a checkpoint, via `inspect --json`.
std::map<std::string, double> tensor_norms(const std::string& checkpoint) {
  tts::test::CliResult result = run_cli("inspect --json " + checkpoint);
  EXPECT_EQ(result.exit_code, 0) << checkpoint;
  std::map<std::string, double> norms;
  for (const auto& tensor : YAML::Load(result.output)["tensors"]) {
    norms[tensor["name"].as<std::string>()] = tensor["l2"].as<double>();
  }
  return norms;
}

std::string import_fixture(const std::string& dir, const std::string& extra = "") {
  std::string out = dir + "/imported.pt";
  tts::test::CliResult result = run_cli(
      "convert --from nvidia " + fx::kCheckpoint + " --config " + fx::kConfig +
          " --set model.p_prenet_dropout=0 --set train.batch_size=3 " + extra + " --out " + out,
      true);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  return out;
}

}  // namespace

TEST(ConvertCommand, ImportsAndExportsNvidiasFormat) {
  std::string dir = tts::test::fresh_dir("convert");
  std::string imported = import_fixture(dir);
  EXPECT_EQ(tensor_norms(imported).size(), 84u);

  std::string exported = dir + "/nvidia.pt";
  tts::test::CliResult result =
      run_cli("convert --to nvidia " + imported + " --out " + exported, true);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("n_symbols=148,symbols_embedding_dim=32"), std::string::npos)
      << result.output;
  std::ifstream hparams(exported + ".hparams");
  std::string line;
  std::getline(hparams, line);
  EXPECT_NE(line.find("attention_location_kernel_size=7"), std::string::npos) << line;

  if (!fs::exists(kPython)) {
    GTEST_SKIP() << "no Python with torch at " << kPython
                 << " (scripts/setup.sh --torch pip installs it): the exported file was not "
                    "loaded by Python";
  }
  // What NVIDIA's load_state_dict(torch.load(FILE)['state_dict'], strict=True) checks: the same
  // names and shapes as NVIDIA's own state dict (the fixture's), here also the same values.
  std::string script = dir + "/check.py";
  std::ofstream(script) << "import sys, torch\n"
                           "ours = torch.load(sys.argv[1])['state_dict']\n"
                           "theirs = torch.load(sys.argv[2], weights_only=False)['state_dict']\n"
                           "assert list(sorted(ours)) == list(sorted(theirs)), set(ours) ^ "
                           "set(theirs)\n"
                           "for k in theirs: assert torch.equal(ours[k], theirs[k]), k\n"
                           "print('strict load ok', len(ours))\n";
  result = tts::test::CliResult{0, ""};
  std::string command = kPython + " " + script + " " + exported + " " + fx::kCheckpoint + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  char buffer[4096];
  std::string output;
  while (fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  EXPECT_EQ(pclose(pipe), 0) << output;
  EXPECT_NE(output.find("strict load ok 84"), std::string::npos) << output;
}

TEST(ConvertCommand, RefusalsNameTheReason) {
  std::string dir = tts::test::fresh_dir("convert_refusals");
  tts::test::CliResult result =
      run_cli("convert --from nvidia " + fx::kCheckpoint + " --config " + fx::kConfig +
                  " --set model.decoder_rnn_dim=512 --out " + dir + "/x.pt",
              true);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("model.decoder_rnn_dim is 512 but the checkpoint's "
                               "decoder.decoder_rnn.weight_hh has 256 rows: use 64"),
            std::string::npos)
      << result.output;
  EXPECT_FALSE(fs::exists(dir + "/x.pt"));

  std::string imported = import_fixture(dir, "--set model.n_frames_per_step=1");
  result = run_cli(
      "convert --from nvidia " + imported + " --config " + fx::kConfig + " --out " + dir + "/y.pt",
      true);
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.output.find("is a tts-train checkpoint"), std::string::npos) << result.output;

  result = run_cli("convert " + imported + " --out " + dir + "/z.pt", true);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.output.find("--from nvidia"), std::string::npos) << result.output;
}

TEST(TrainInitFrom, WarmStartsFromNvidiasFileSkippingTheNamedTensors) {
  std::string dir = tts::test::fresh_dir("init_from");
  std::string store = fx::store(dir + "/feats", 1);
  // A learning rate of 1e-12 (Adam moves each weight by about that) and frozen BatchNorm: one
  // step leaves the warm-started weights as they were, to the test's tolerance.
  std::string common = "train --config " + fx::kConfig + " --data " + store +
                       " --max-steps 1 --set train.batch_size=2 --set train.learning_rate=1e-12 "
                       "--set train.lr_min=0 "
                       "--set train.freeze_batch_norm=true --set logging.samples=false "
                       "--set train.device=cpu ";
  tts::test::CliResult result = run_cli(
      common + "--out " + dir + "/run --init-from " + fx::kCheckpoint + " --init-skip embedding",
      true);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("skipped: embedding.weight"), std::string::npos) << result.output;
  std::map<std::string, double> reference = tensor_norms(import_fixture(dir));
  std::map<std::string, double> trained = tensor_norms(dir + "/run/checkpoints/latest");
  ASSERT_EQ(trained.size(), reference.size());
  for (const auto& [name, l2] : reference) {
    if (name == "embedding.weight") {
      EXPECT_NE(trained[name], l2);
    } else if (name.find("num_batches_tracked") == std::string::npos) {
      EXPECT_NEAR(trained[name], l2, 1e-6 * (1 + l2)) << name;
    }
  }
  YAML::Node inspected =
      YAML::Load(run_cli("inspect --json " + dir + "/run/checkpoints/latest").output);
  EXPECT_EQ(inspected["step"].as<int>(), 1);
  EXPECT_EQ(inspected["symbols"].size(), 148u) << "NVIDIA's table, recorded";

  // Into a model of another alphabet: the embedding is copied by symbol, and the log says how.
  tts::config::Config english = fx::config();
  english.text.symbol_set = tts::config::SymbolSet::kEnglish;
  std::string english_store = fx::store(dir + "/feats_english", 1, english);
  result = run_cli("train --config " + fx::kConfig + " --data " + english_store +
                       " --max-steps 1 --set train.batch_size=2 --set logging.samples=false "
                       "--set train.device=cpu --set text.symbol_set=english --out " +
                       dir + "/english --init-from " + fx::kCheckpoint,
                   true);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("embedding remapped by symbol (64 of the model's 66 symbols"),
            std::string::npos)
      << result.output;
  inspected = YAML::Load(run_cli("inspect --json " + dir + "/english/checkpoints/latest").output);
  EXPECT_EQ(inspected["symbols"].size(), 66u);
  EXPECT_EQ(inspected["symbols"][1].as<std::string>(), "~");

  result = run_cli(common + "--out " + dir + "/bad --set model.decoder_rnn_dim=32 --init-from " +
                       fx::kCheckpoint,
                   true);
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.output.find("decoder.decoder_rnn.weight_hh (checkpoint 256x64, model 128x32"),
            std::string::npos)
      << result.output;
  size_t skip = result.output.find("leave those tensors initialized: --init-skip ");
  ASSERT_NE(skip, std::string::npos) << result.output;
  EXPECT_NE(result.output.find(" decoder.decoder_rnn.weight_hh", skip), std::string::npos)
      << result.output;
}

TEST(GtaCommand, WritesNvidiasPostnetMelsResumably) {
  std::string dir = tts::test::fresh_dir("gta");
  std::string store = fx::store(dir + "/feats", 1);
  std::string imported = import_fixture(dir);
  // The fixture's store keeps no waveforms and has no corpus: the mels alone (gta's test on a
  // corpus, tests/cli/test_gta_command.cpp, checks the store and filelist.txt).
  std::string gta = "gta --checkpoint " + imported + " --data " + store + " --out " + dir + "/gta";
  tts::test::CliResult result = run_cli(gta, true);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  torch::Tensor expected = fx::array("expected_mel_postnet");
  torch::Tensor lengths = fx::array("output_lengths").to(torch::kInt64);
  for (int k = 0; k < 3; ++k) {
    tts::formats::NpyArray mel =
        tts::formats::read_npy(dir + "/gta/nv" + std::to_string(k) + ".npy");
    int64_t frames = lengths[k].item<int64_t>();
    ASSERT_EQ(mel.shape, (std::vector<int64_t>{80, frames}));
    torch::Tensor ours = torch::tensor(mel.data).reshape({80, frames});
    EXPECT_LE(fx::relative_error(ours, expected[k].narrow(1, 0, frames)), 1e-5) << k;
  }
  EXPECT_FALSE(fs::exists(dir + "/gta/features.yaml")) << "no waveforms: not a store";
  EXPECT_NE(result.output.find("holds the mels alone"), std::string::npos) << result.output;

  // Resumable: a second run keeps the complete files and redoes a truncated one.
  fs::resize_file(dir + "/gta/nv1.npy", 100);
  result = run_cli(gta, true);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("1 ground-truth-aligned mels written"), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("2 already there"), std::string::npos) << result.output;
  EXPECT_EQ(tts::formats::read_npy(dir + "/gta/nv1.npy").shape, (std::vector<int64_t>{80, 624}));

  // Two worker processes share the utterances (each batches its own, so NVIDIA's padding
  // effects differ from the one-batch run; the shapes and the filelist do not).
  result = run_cli("gta --checkpoint " + imported + " --data " + store + " --out " + dir +
                       "/gta2 --nproc-per-node 2",
                   true);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(tts::formats::read_npy(dir + "/gta2/nv" + std::to_string(k) + ".npy").shape,
              (std::vector<int64_t>{80, lengths[k].item<int64_t>()}));
  }
  EXPECT_TRUE(fs::exists(dir + "/gta2/gta.yaml"));

  // A store mel that is not the [frames, n_mels] its tables promise is refused before the model
  // reads it, naming the file and the utterance.
  const std::string mel = store + "/mels/nv2.npy";
  ASSERT_TRUE(fs::exists(mel));
  tts::formats::write_npy(mel, std::vector<float>(624, 0.f).data(), {624});
  result = run_cli("gta --checkpoint " + imported + " --data " + store + " --out " + dir + "/gta3",
                   true);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find(mel + " (utterance nv2): 1-D array of shape [624], expected 2-D"),
            std::string::npos)
      << result.output;
}
