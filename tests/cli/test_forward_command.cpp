// tts-train forward through the CLI: each family's network on named .npy arrays reproduces the
// reference fixtures made with the peers' own code (tests/data/vocoders/README.md,
// tests/data/README.md): jik876's HiFi-GAN generator, r9y9's WaveNet (logits and loss), NVIDIA's
// Tacotron-2 teacher-forced outputs; the names are checked; `vocode --out x.npy` writes the float
// samples forward computes.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <string>

#include "cli_test_util.h"
#include "tts/formats/npy.h"

namespace {

using tts::test::CliResult;
using tts::test::run_cli;

const std::string kData = std::string(TTS_TEST_DATA_DIR);
const std::string kVocoders = kData + "/vocoders";

std::string scratch(const std::string& name) {
  std::filesystem::create_directories(TTS_TEST_TMP_DIR);
  return std::string(TTS_TEST_TMP_DIR) + "/" + name;
}

torch::Tensor npy(const std::string& path) {
  tts::formats::NpyArray array = tts::formats::read_npy(path);
  return torch::from_blob(array.data.data(), array.shape, torch::kFloat).clone();
}

double max_abs(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

void expect_ok(const CliResult& result, const std::string& what) {
  ASSERT_EQ(result.exit_code, 0) << what << "\n" << result.output;
}

TEST(ForwardCommand, HifiganReproducesJik876sGenerators) {
  for (const std::string fixture : {"shared", "resblock1_hop100"}) {
    const std::string dir = kVocoders + "/" + fixture;
    const std::string checkpoint = scratch("hifigan_" + fixture + ".pt");
    expect_ok(run_cli("convert --from hifigan " + dir + "/hifigan_g.pt --hparams " + dir +
                          "/hifigan_config.json --out " + checkpoint,
                      true),
              "convert " + fixture);
    const std::string audio = scratch("hifigan_" + fixture + "_audio.npy");
    expect_ok(run_cli("forward --checkpoint " + checkpoint + " --input mel=" + dir +
                          "/hifigan_mel.npy --output audio=" + audio,
                      true),
              "forward " + fixture);
    torch::Tensor expected = npy(dir + "/hifigan_audio.npy");
    torch::Tensor ours = npy(audio);
    ASSERT_EQ(ours.sizes(), expected.sizes()) << fixture;
    EXPECT_LE(max_abs(ours, expected), 1e-5) << fixture;
  }
}

TEST(ForwardCommand, VocodeWritesTheFloatSamplesForwardComputesToAnNpy) {
  const std::string dir = kVocoders + "/shared";
  const std::string checkpoint = scratch("hifigan_vocode.pt");
  expect_ok(run_cli("convert --from hifigan " + dir + "/hifigan_g.pt --hparams " + dir +
                        "/hifigan_config.json --out " + checkpoint,
                    true),
            "convert");
  // One utterance of the fixture's batch, in our layout [frames, n_mels].
  torch::Tensor mel = npy(dir + "/hifigan_mel.npy")[0].t().contiguous();
  const std::string mel_path = scratch("one_mel.npy");
  tts::formats::write_npy(mel_path, mel.data_ptr<float>(), mel.sizes().vec());
  const std::string vocoded = scratch("vocoded.npy");
  expect_ok(
      run_cli("vocode --checkpoint " + checkpoint + " --mel " + mel_path + " --out " + vocoded,
              true),
      "vocode");
  const std::string forwarded = scratch("forwarded.npy");
  expect_ok(run_cli("forward --checkpoint " + checkpoint + " --input mel=" + mel_path +
                        " --output audio=" + forwarded,
                    true),
            "forward");
  torch::Tensor samples = npy(vocoded);
  ASSERT_EQ(samples.dim(), 1);
  EXPECT_EQ(samples.size(0), mel.size(0) * 256);
  EXPECT_LE(max_abs(samples, npy(forwarded)), 1e-6);
  EXPECT_LE(max_abs(samples, npy(dir + "/hifigan_audio.npy")[0][0]), 1e-5);
}

TEST(ForwardCommand, WavenetReproducesR9y9sLogitsAndLoss) {
  for (const std::string name :
       {"wavenet", "wavenet_normal", "wavenet_gaussian", "wavenet_logistic"}) {
    const std::string stem = kVocoders + "/" + name;
    const std::string checkpoint = scratch(name + ".pt");
    expect_ok(run_cli("convert --from wavenet " + stem + ".pth --hparams " + stem +
                          "_hparams.json --out " + checkpoint,
                      true),
              "convert " + name);
    const std::string logits = scratch(name + "_logits.npy");
    const std::string loss = scratch(name + "_loss.npy");
    std::string inputs = " --input audio=" + stem + "_x.npy --input mel=" + stem + "_c.npy";
    if (std::filesystem::exists(stem + "_g.npy")) inputs += " --input speaker=" + stem + "_g.npy";
    expect_ok(run_cli("forward --checkpoint " + checkpoint + inputs + " --output logits=" + logits +
                          " --output loss=" + loss,
                      true),
              "forward " + name);
    torch::Tensor y_hat = npy(stem + "_y_hat.npy");
    torch::Tensor ours = npy(logits);
    ASSERT_EQ(ours.sizes(), y_hat.sizes()) << name;
    EXPECT_LE(max_abs(ours, y_hat), 1e-5) << name;
    // r9y9's loss is the sum over B * (T - 1) predicted samples; ours their mean.
    YAML::Node meta = YAML::LoadFile(stem + "_meta.json");
    const double summed = (meta["mol_loss"] ? meta["mol_loss"] : meta["loss"]).as<double>();
    torch::Tensor x = npy(stem + "_x.npy");
    const double mean = summed / static_cast<double>(x.size(0) * (x.size(-1) - 1));
    EXPECT_NEAR(npy(loss).item<double>(), mean, 1e-5 * std::abs(mean)) << name;
  }
}

TEST(ForwardCommand, Tacotron2ReproducesNvidiasTeacherForcedOutputs) {
  const std::string dir = kData + "/nvidia_tacotron2_tiny";
  const std::string checkpoint = scratch("nvidia.pt");
  // The reference was computed with the prenet's dropout off.
  expect_ok(run_cli("convert --from nvidia " + dir + "/checkpoint.pt --config " + dir +
                        "/config.yaml --set model.p_prenet_dropout=0 --out " + checkpoint,
                    true),
            "convert");
  const std::string out = scratch("nvidia_");
  expect_ok(run_cli("forward --checkpoint " + checkpoint + " --input text=" + dir +
                        "/text.npy --input mel=" + dir + "/mels.npy --input text_lengths=" + dir +
                        "/input_lengths.npy --input mel_lengths=" + dir +
                        "/output_lengths.npy --output mel=" + out +
                        "mel.npy --output mel_postnet=" + out +
                        "mel_postnet.npy --output alignments=" + out + "alignments.npy",
                    true),
            "forward");
  // Two outputs of one file are refused before anything is written.
  const std::string same = scratch("nvidia_same.npy");
  CliResult twice =
      run_cli("forward --checkpoint " + checkpoint + " --input text=" + dir +
                  "/text.npy --input mel=" + dir + "/mels.npy --input text_lengths=" + dir +
                  "/input_lengths.npy --input mel_lengths=" + dir +
                  "/output_lengths.npy --output mel=" + same + " --output mel_postnet=" + same,
              true);
  EXPECT_EQ(twice.exit_code, 2) << twice.output;
  EXPECT_NE(twice.output.find("would both write " + same + "; nothing was written"),
            std::string::npos)
      << twice.output;
  EXPECT_FALSE(std::filesystem::exists(same));
  for (const std::string name : {"mel", "mel_postnet", "alignments"}) {
    torch::Tensor expected = npy(dir + "/expected_" + name + ".npy");
    torch::Tensor ours = npy(out + name + ".npy");
    ASSERT_EQ(ours.sizes(), expected.sizes()) << name;
    EXPECT_LE(max_abs(ours, expected) / expected.abs().max().item<double>(), 1e-5) << name;
  }
}

TEST(ForwardCommand, NamesAreCheckedAgainstTheFamilysAndListed) {
  const std::string dir = kVocoders + "/shared";
  const std::string checkpoint = scratch("hifigan_names.pt");
  expect_ok(run_cli("convert --from hifigan " + dir + "/hifigan_g.pt --hparams " + dir +
                        "/hifigan_config.json --out " + checkpoint,
                    true),
            "convert");
  const std::string base = "forward --checkpoint " + checkpoint;
  CliResult unknown = run_cli(
      base + " --input text=" + dir + "/hifigan_mel.npy --output audio=" + scratch("x.npy"), true);
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("--input text"), std::string::npos) << unknown.output;
  EXPECT_NE(unknown.output.find("mel ("), std::string::npos) << unknown.output;
  CliResult bad_output = run_cli(
      base + " --input mel=" + dir + "/hifigan_mel.npy --output logits=" + scratch("x.npy"), true);
  EXPECT_EQ(bad_output.exit_code, 2) << bad_output.output;
  EXPECT_NE(bad_output.output.find("audio ("), std::string::npos) << bad_output.output;
  CliResult missing = run_cli(base + " --input mel=" + dir + "/hifigan_mel.npy --output audio=" +
                                  scratch("no_such_folder/x.npy"),
                              true);
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("no folder"), std::string::npos) << missing.output;
  EXPECT_FALSE(std::filesystem::exists(scratch("x.npy")));
  // The rule vocode and synthesize share (cli/outputs.h): the folder is named, an output is a
  // .npy, and no output overwrites an input.
  EXPECT_NE(missing.output.find("no folder " + scratch("no_such_folder") + " to write"),
            std::string::npos)
      << missing.output;
  CliResult wav = run_cli(
      base + " --input mel=" + dir + "/hifigan_mel.npy --output audio=" + scratch("x.wav"), true);
  EXPECT_EQ(wav.exit_code, 2) << wav.output;
  EXPECT_NE(wav.output.find("give a name ending in .npy"), std::string::npos) << wav.output;
  const std::string input = scratch("input_mel.npy");
  std::filesystem::copy_file(dir + "/hifigan_mel.npy", input,
                             std::filesystem::copy_options::overwrite_existing);
  const auto before = std::filesystem::file_size(input);
  CliResult overwrite = run_cli(base + " --input mel=" + input + " --output audio=" + input, true);
  EXPECT_EQ(overwrite.exit_code, 2) << overwrite.output;
  EXPECT_NE(overwrite.output.find("would overwrite its input"), std::string::npos)
      << overwrite.output;
  EXPECT_EQ(std::filesystem::file_size(input), before);
}

}  // namespace
