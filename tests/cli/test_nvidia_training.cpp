// Training parity with NVIDIA/tacotron2: `tts-train train` under NVIDIA's recipe takes the steps
// NVIDIA's train.py takes. The reference (tests/data/nvidia_tacotron2_tiny, train_expected.*) is
// NVIDIA's model, Tacotron2Loss, clip_grad_norm_(1.0) and Adam(lr 1e-3, weight_decay 1e-6) run 3
// steps on the fixture's one batch from its checkpoint, train mode, every dropout off. Ours: the
// same batch as a feature store, --init-from that checkpoint, the same recipe by --set, 3 steps,
// then `convert --to nvidia`. Everything about the model (dimensions, batch size, sentences) is
// read from the fixture, so another fixture is checked the same way.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "../models/tacotron2/nvidia_fixture.h"
#include "cli_test_util.h"
#include "tts/core/fs.h"
#include "tts/models/tacotron2/conversion/nvidia.h"
#include "tts/text/text_processor.h"

namespace fx = nvidia_fixture;
using tts::test::run_cli;

namespace {

// NVIDIA's train.py with its hparams.py, every dropout off (as the reference was made).
const std::string kNvidiaRecipe =
    " --set train.loss_normalization=padded_batch --set model.zero_padding_in_convolutions=false"
    " --set model.nvidia_postnet_gradient=true"
    " --set train.adam_eps=1e-8 --set train.learning_rate=1e-3 --set train.weight_decay=1e-6"
    " --set train.grad_clip_thresh=1 --set train.lr_schedule=constant"
    " --set train.freeze_batch_norm=false --set train.batch_norm=per_rank"
    " --set train.guided_attention_weight=0"
    " --set train.loss=mse --set train.stop_pos_weight=1"
    " --set model.p_prenet_dropout=0 --set model.p_attention_dropout=0"
    " --set model.p_decoder_dropout=0 --set model.p_encoder_dropout=0"
    " --set model.p_postnet_dropout=0";

// The model of hparams.json as --set overrides of our config's keys (the same names, but for
// n_mel_channels).
std::string model_of_hparams() {
  YAML::Node hparams = YAML::LoadFile(fx::kDir + "/hparams.json");  // JSON is YAML
  std::string sets = " --set audio.n_mels=" + hparams["n_mel_channels"].as<std::string>();
  for (const char* key :
       {"symbols_embedding_dim", "encoder_kernel_size", "encoder_n_convolutions",
        "encoder_embedding_dim", "n_frames_per_step", "decoder_rnn_dim", "prenet_dim",
        "attention_rnn_dim", "attention_dim", "attention_location_n_filters",
        "attention_location_kernel_size", "postnet_embedding_dim", "postnet_kernel_size",
        "postnet_n_convolutions"}) {
    sets += std::string(" --set model.") + key + "=" + hparams[key].as<std::string>();
  }
  return sets;
}

// Relative L2 distance of two tensors: |a - b| / |b| (|b| = 0: |a - b|).
double relative_l2(const torch::Tensor& a, const torch::Tensor& b) {
  torch::Tensor a64 = a.to(torch::kFloat64), b64 = b.to(torch::kFloat64);
  double scale = b64.norm().item<double>();
  double distance = (a64 - b64).norm().item<double>();
  return scale > 0 ? distance / scale : distance;
}

}  // namespace

TEST(NvidiaTraining, ThreeStepsUnderNvidiasRecipeTakeNvidiasUpdates) {
  const std::string dir = tts::test::fresh_dir("nvidia_training");
  const std::string model = model_of_hparams();
  const int64_t batch = fx::array("mels").size(0);
  tts::config::Config config = tts::config::load_config(
      fx::kConfig, {"model.zero_padding_in_convolutions=false", "data.val_size=0"});
  std::string store = fx::store(dir + "/feats", 0, config);

  // Our text front end gives the fixture's ids, so the model sees NVIDIA's input.
  tts::text::TextProcessor text(config.text);
  torch::Tensor ids = fx::array("text").to(torch::kInt64);
  torch::Tensor input_lengths = fx::array("input_lengths").to(torch::kInt64);
  std::ifstream sentences(fx::kDir + "/sentences.txt");
  std::string sentence;
  for (int64_t k = 0; k < batch; ++k) {
    ASSERT_TRUE(std::getline(sentences, sentence)) << "sentences.txt has fewer than " << batch;
    std::vector<int64_t> ours = text.to_ids(text.clean(sentence));
    torch::Tensor theirs = ids[k].narrow(0, 0, input_lengths[k].item<int64_t>());
    ASSERT_TRUE(torch::equal(torch::tensor(ours), theirs)) << "sentence " << k << ": " << sentence;
  }

  const std::string run = dir + "/run";
  tts::test::CliResult trained =
      run_cli("train --config " + fx::kConfig + " --data " + store + " --out " + run +
                  " --init-from " + fx::kCheckpoint + " --max-steps 3" + model + kNvidiaRecipe +
                  " --set train.batch_size=" + std::to_string(batch) +
                  " --set data.val_size=0 --set train.log_interval=1 --set train.val_interval=1000"
                  " --set train.checkpoint_interval=1000 --set logging.samples=false",
              true);
  ASSERT_EQ(trained.exit_code, 0) << trained.output;
  const std::string exported = dir + "/ours_nvidia.pt";
  tts::test::CliResult converted =
      run_cli("convert --to nvidia " + run + "/checkpoints/latest --out " + exported, true);
  ASSERT_EQ(converted.exit_code, 0) << converted.output;

  // Per step: the loss (step 1, before any update) and the gradient norm before clipping.
  YAML::Node expected = YAML::LoadFile(fx::kDir + "/train_expected.json");
  std::map<int64_t, YAML::Node> ours;
  std::stringstream metrics(tts::read_file(run + "/metrics.jsonl"));
  for (std::string line; std::getline(metrics, line);) {
    YAML::Node record = YAML::Load(line);
    if (record["kind"].as<std::string>() == "train") ours[record["step"].as<int64_t>()] = record;
  }
  ASSERT_EQ(ours.size(), 3u) << tts::read_file(run + "/metrics.jsonl");
  for (const auto& step : expected["steps"]) {
    const int64_t n = step["step"].as<int64_t>();
    ASSERT_TRUE(ours.count(n)) << "no train record for step " << n;
    const double grad_norm = step["grad_norm"].as<double>();
    EXPECT_NEAR(ours[n]["grad_norm"].as<double>(), grad_norm, 1e-4 * grad_norm) << "step " << n;
    std::cout << "step " << n << ": gradient norm " << ours[n]["grad_norm"].as<double>()
              << ", NVIDIA's " << grad_norm << "\n";
    if (n == 1) {
      for (const auto& [part, name] :
           std::vector<std::pair<std::string, std::string>>{{"loss", "loss"},
                                                            {"mel_loss", "mel"},
                                                            {"postnet_loss", "mel_postnet"},
                                                            {"gate_loss", "gate"}}) {
        const double value = step[name].as<double>();
        EXPECT_NEAR(ours[n][part].as<double>(), value, 1e-5 * std::abs(value)) << part;
      }
    }
  }

  // Every tensor's update (after - before), parameters and BatchNorm buffers, in NVIDIA's names.
  // A convolution's bias followed by BatchNorm on batch statistics gets a gradient of exactly 0
  // in exact arithmetic (BatchNorm subtracts the batch mean); what it gets is rounding, which
  // Adam (eps 1e-8) turns into full-size steps: NVIDIA's own run on another BLAS or thread count
  // moves them differently. Those biases are held to the size of their update, and the
  // running means of their BatchNorms (which average the bias in) to 1e-2.
  auto before = tts::tacotron2::read_nvidia_state_dict(fx::kCheckpoint);
  auto theirs = tts::tacotron2::read_nvidia_state_dict(fx::kDir + "/train_expected.pt");
  auto after = tts::tacotron2::read_nvidia_state_dict(exported);
  ASSERT_EQ(after.size(), theirs.size());
  auto ends_with = [](const std::string& name, const std::string& suffix) {
    return name.size() >= suffix.size() &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  auto prefix = [](const std::string& name, size_t drop) {
    return name.substr(0, name.size() - drop);
  };
  int compared = 0;
  double worst = 0;
  std::string worst_name;
  for (const auto& [name, their_after] : theirs) {
    ASSERT_TRUE(after.count(name)) << name << " is not in our export";
    ASSERT_TRUE(before.count(name)) << name << " is not in the starting checkpoint";
    const torch::Tensor& start = before.at(name);
    if (!their_after.is_floating_point()) {  // num_batches_tracked
      EXPECT_TRUE(torch::equal(after.at(name), their_after)) << name;
      continue;
    }
    const torch::Tensor ours_update = after.at(name) - start;
    const torch::Tensor their_update = their_after - start;
    // NVIDIA's ConvNorm + BatchNorm pairs: "<p>.0.conv.bias" then "<p>.1.running_mean".
    const bool bias_before_norm =
        ends_with(name, ".0.conv.bias") &&
        theirs.count(prefix(name, std::string(".0.conv.bias").size()) + ".1.running_mean");
    const bool mean_after_bias =
        ends_with(name, ".1.running_mean") &&
        theirs.count(prefix(name, std::string(".1.running_mean").size()) + ".0.conv.bias");
    if (bias_before_norm) {
      double theirs_norm = their_update.norm().item<double>();
      EXPECT_NEAR(ours_update.norm().item<double>(), theirs_norm, 0.1 * theirs_norm) << name;
    } else {
      const double error = relative_l2(ours_update, their_update);
      EXPECT_LE(error, mean_after_bias ? 1e-2 : 1e-3) << name;
      if (!mean_after_bias && error > worst) {
        worst = error;
        worst_name = name;
      }
      ++compared;
    }
  }
  EXPECT_GT(compared, 20);
  std::cout << compared
            << " tensors' updates compared; the largest relative L2 difference: " << worst << " ("
            << worst_name << ")\n";
}
