#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>

#include "../support/scratch.h"
#include "tts/checkpoint/checkpoint.h"
#include "tts/core/error.h"
#include "tts/models/registry.h"

namespace fs = std::filesystem;
using namespace tts::checkpoint;

namespace {

struct NetImpl : torch::nn::Module {
  explicit NetImpl(int hidden) {
    first = register_module("first", torch::nn::Linear(4, hidden));
    norm = register_module("norm", torch::nn::BatchNorm1d(hidden));
    second = register_module("second", torch::nn::Linear(hidden, 2));
  }
  torch::Tensor forward(const torch::Tensor& x) { return second(norm(first(x)).relu()); }
  torch::nn::Linear first{nullptr};
  torch::nn::BatchNorm1d norm{nullptr};
  torch::nn::Linear second{nullptr};
};
TORCH_MODULE(Net);

void train_steps(Net& net, torch::optim::Adam& adam, int steps) {
  for (int i = 0; i < steps; ++i) {
    adam.zero_grad();
    auto x = torch::randn({8, 4});
    net->forward(x).pow(2).mean().backward();
    adam.step();
  }
}

}  // namespace

TEST(Checkpoint, RoundTripContinuesExactlyLikeAnUninterruptedRun) {
  std::string dir = tts::test::fresh_dir("ckpt_roundtrip");
  torch::manual_seed(7);
  Net net(16);
  torch::optim::Adam adam(net->parameters(), torch::optim::AdamOptions(1e-2));
  train_steps(net, adam, 3);
  TrainingState state{3, 1, 2, 4, {/*r=*/2, /*batch_size=*/8}, {}};
  std::string path = save_checkpoint(dir, capture(*net, {&adam}, state, "config: yes\n"), 5);
  EXPECT_TRUE(fs::exists(path));
  EXPECT_TRUE(fs::is_symlink(dir + "/latest"));
  train_steps(net, adam, 3);  // the uninterrupted run

  torch::manual_seed(99);  // a fresh process: other weights, other RNG state
  Net resumed(16);
  torch::optim::Adam resumed_adam(resumed->parameters(), torch::optim::AdamOptions(1e-2));
  Checkpoint loaded = load_checkpoint(dir + "/latest");
  EXPECT_EQ(loaded.state.step, 3);
  EXPECT_EQ(loaded.state.epoch, 1);
  EXPECT_EQ(loaded.state.batch_in_epoch, 2);
  EXPECT_EQ(loaded.state.world_size, 4);
  EXPECT_EQ(loaded.state.phase.batch_size, 8);
  EXPECT_EQ(loaded.state.phase.r, 2);
  EXPECT_EQ(loaded.config_yaml, "config: yes\n");
  EXPECT_EQ(loaded.parameter_names.size(), resumed->parameters().size());
  restore_model(loaded, *resumed, dir);
  restore_optimizer(loaded, 0, resumed_adam);
  restore_rng(loaded, torch::kCPU);
  train_steps(resumed, resumed_adam, 3);

  auto expected = net->named_parameters();
  for (const auto& item : resumed->named_parameters()) {
    EXPECT_TRUE(torch::equal(item.value(), expected[item.key()])) << item.key();
  }
  EXPECT_TRUE(torch::equal(resumed->norm->running_mean, net->norm->running_mean));
}

TEST(Checkpoint, KeepsOnlyTheNewestAndLatestPointsToTheLast) {
  std::string dir = tts::test::fresh_dir("ckpt_keep");
  Net net(4);
  for (int64_t step : {10, 20, 30, 40}) {
    TrainingState state;
    state.step = step;
    save_checkpoint(dir, capture(*net, {}, state, ""), 2);
  }
  std::vector<std::string> files = checkpoint_files(dir);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_NE(files[0].find("step_00000040.pt"), std::string::npos);
  EXPECT_NE(files[1].find("step_00000030.pt"), std::string::npos);
  EXPECT_EQ(fs::read_symlink(dir + "/latest").string(), "step_00000040.pt");
  EXPECT_EQ(load_checkpoint(dir).state.step, 40);
}

// Names are parsed strictly: step_<1 to 18 digits>.pt, nothing else (stoll once read the leading
// digits of "step_1';CMD;#.pt").
TEST(Checkpoint, OnlyStrictStepNamesAreCheckpoints) {
  std::string dir = tts::test::fresh_dir("ckpt_names");
  for (const char* name :
       {"step_00000003.pt", "step_12.pt", "step_1';touch x;#.pt", "step_.pt", "step_+5.pt",
        "step_ 7.pt", "step_1234567890123456789.pt", "step_12.pt.tmp.0123456789abcdef",
        "step_9.pt.pt", "xstep_8.pt", "step_7.PT"}) {
    std::ofstream(dir + "/" + name) << "x";
  }
  std::vector<std::string> files = checkpoint_files(dir);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(fs::path(files[0]).filename(), "step_12.pt");
  EXPECT_EQ(fs::path(files[1]).filename(), "step_00000003.pt");
}

TEST(Checkpoint, CorruptNewestFallsBackToThePreviousWithAWarning) {
  std::string dir = tts::test::fresh_dir("ckpt_corrupt");
  Net net(4);
  for (int64_t step : {1, 2}) {
    TrainingState state;
    state.step = step;
    save_checkpoint(dir, capture(*net, {}, state, ""), 5);
  }
  std::ofstream(dir + "/step_00000002.pt", std::ios::trunc) << "half a checkpoint";
  try {
    load_checkpoint(dir + "/latest");
    FAIL() << "a corrupt checkpoint loaded";
  } catch (const tts::Error& e) {
    EXPECT_NE(std::string(e.what()).find("step_00000002.pt' is corrupt"), std::string::npos)
        << e.what();
  }
  std::string used;
  Checkpoint checkpoint = load_newest_checkpoint(dir + "/latest", &used);
  EXPECT_EQ(checkpoint.state.step, 1);
  EXPECT_NE(used.find("step_00000001.pt"), std::string::npos);
}

TEST(Checkpoint, AModelOfAnotherShapeIsRefusedWithTheNames) {
  std::string dir = tts::test::fresh_dir("ckpt_mismatch");
  Net small(4);
  save_checkpoint(dir, capture(*small, {}, TrainingState{}, ""), 1);
  Net big(8);
  torch::Tensor before = big->second->bias.clone();
  try {
    restore_model(load_checkpoint(dir), *big, dir);
    FAIL() << "a mismatched checkpoint loaded";
  } catch (const tts::Error& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("checkpoint '" + dir + "' does not fit the model of the config"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("first.weight (checkpoint 4x4, model 8x4)"), std::string::npos)
        << message;
    EXPECT_NE(message.find("use the config the checkpoint was trained with"), std::string::npos)
        << message;
  }
  // second.bias fits, but a model is restored whole or not at all.
  EXPECT_TRUE(torch::equal(big->second->bias, before));
  EXPECT_THROW(load_newest_checkpoint(tts::test::fresh_dir("ckpt_empty")), tts::Error);
}

// Checkpoints hold the optimizer's state as plain tensors and numbers, read by the data-only
// reader: no TorchScript archive is loaded. An older checkpoint (format 1) whose optimizer state
// is such an archive still shows its weights, but resuming from it is refused with the way on.
TEST(Checkpoint, AnOlderCheckpointsTorchScriptOptimizerArchiveIsNotLoaded) {
  std::string dir = tts::test::fresh_dir("ckpt_format1");
  Net net(4);
  torch::optim::Adam adam(net->parameters(), torch::optim::AdamOptions(1e-2));
  train_steps(net, adam, 1);
  Checkpoint current = capture(*net, {&adam}, TrainingState{}, "");
  ASSERT_EQ(current.optimizers.at(0).params.size(), net->parameters().size());
  EXPECT_TRUE(current.optimizers.at(0).params.front().has_state);

  c10::Dict<std::string, at::Tensor> tensors;
  for (const auto& [name, tensor] : current.tensors) tensors.insert(name, tensor);
  c10::List<std::string> names;
  for (const auto& name : current.parameter_names) names.push_back(name);
  c10::impl::GenericDict dict(c10::StringType::get(), c10::AnyType::get());
  dict.insert(std::string("format"), std::string("tts-train-checkpoint-1"));
  for (const char* key : {"step", "epoch", "batch_in_epoch", "world_size", "batch_size"}) {
    dict.insert(std::string(key), int64_t{1});
  }
  dict.insert(std::string("config"), std::string(""));
  dict.insert(std::string("model"), tensors);
  dict.insert(std::string("parameter_names"), names);
  dict.insert(std::string("optimizer"), torch::ones({16}, torch::kUInt8));  // an archive's bytes
  dict.insert(std::string("rng_state"), torch::empty({0}, torch::kUInt8));
  std::vector<char> bytes = torch::pickle_save(c10::IValue(dict));
  std::string path = dir + "/step_00000001.pt";
  std::ofstream(path, std::ios::binary) << std::string(bytes.begin(), bytes.end());

  Checkpoint old = load_checkpoint(path);
  Net fresh(4);
  restore_model(old, *fresh, path);
  EXPECT_TRUE(torch::equal(fresh->first->weight, net->first->weight));
  torch::optim::Adam fresh_adam(fresh->parameters(), torch::optim::AdamOptions(1e-2));
  try {
    restore_optimizer(old, 0, fresh_adam);
    FAIL() << "an optimizer archive was loaded";
  } catch (const tts::Error& e) {
    std::string message = e.what();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find("--init-from"), std::string::npos) << message;
  }
  EXPECT_TRUE(fresh_adam.state().empty());
}

TEST(Checkpoint, ThePhaseInForceIsTheStatesOrForOlderFilesTheConfigs) {
  tts::config::Config config;
  config.model.n_frames_per_step = 2;
  config.train.batch_size = 16;
  Checkpoint checkpoint;
  checkpoint.state.phase = {3, 8};  // an r_schedule row in force
  EXPECT_EQ(checkpoint_phase(checkpoint, config), (tts::data::Phase{3, 8}));
  checkpoint.state.phase = {0, 0};  // written before the phase was recorded, or imported
  EXPECT_EQ(checkpoint_phase(checkpoint, config), (tts::data::Phase{2, 16}));
}

// A checkpoint's config is checked by the user config's rules, ceilings included, and its model's
// size is computed before anything is built: both are the file's errors (exit code 1).
TEST(Checkpoint, AConfigPastTheCeilingsOrAHugeModelIsRefusedBeforeBuilding) {
  auto error_of = [](const std::string& yaml) -> std::pair<std::string, int> {
    Checkpoint checkpoint;
    checkpoint.config_yaml = yaml;
    try {
      tts::models::config_of(checkpoint, "step_1.pt");
    } catch (const tts::Error& e) {
      return {e.what(), e.exit_code()};
    }
    return {"(loaded)", 0};
  };
  auto [message, code] = error_of("model:\n  decoder_rnn_dim: 11000\n");
  EXPECT_NE(message.find("step_1.pt (config) line 2: config: model.decoder_rnn_dim = 11000: must "
                         "be at most 8192"),
            std::string::npos)
      << message;
  EXPECT_EQ(code, 1);
  std::tie(message, code) =
      error_of("model:\n  decoder_rnn_dim: 8192\n  attention_rnn_dim: 8192\n");
  EXPECT_NE(message.find("step_1.pt (config): the config's model would have 859187585 parameters "
                         "(3.4 GB), past the limit of 2 GB"),
            std::string::npos)
      << message;
  EXPECT_EQ(code, 1);
  EXPECT_EQ(error_of("model:\n  decoder_rnn_dim: 2048\n").first, "(loaded)");
}

namespace {

std::string load_error(const std::function<void()>& load) {
  try {
    load();
  } catch (const tts::Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(Checkpoint, NonFiniteWeightsOrMomentsAndNegativeSecondMomentsAreRefusedByName) {
  const std::string dir = tts::test::fresh_dir("ckpt_hostile_state");
  Net net(4);
  torch::optim::Adam adam(net->parameters(), torch::optim::AdamOptions(1e-2));
  train_steps(net, adam, 2);
  const std::string path =
      save_checkpoint(dir, capture(*net, {&adam}, TrainingState{}, "config: yes\n"), 1);

  // A second moment below zero (finite: written as it is) is refused when read.
  Checkpoint negative = capture(*net, {&adam}, TrainingState{}, "");
  negative.optimizers.at(0).params.at(1).exp_avg_sq.view({-1})[0] = -1.0f;
  const std::string negative_path = dir + "/negative.pt";
  write_checkpoint(negative_path, negative);
  std::string e = load_error([&] { load_checkpoint(negative_path); });
  EXPECT_NE(e.find("parameter 1 exp_avg_sq holds 1 negative value"), std::string::npos) << e;
  EXPECT_NE(e.find(negative_path), std::string::npos) << e;

  // NaN in a moment (a file made elsewhere: our writer refuses one).
  tts::formats::PickleValue root = tts::formats::read_torch_file(path);
  auto items = [&](const char* key) -> std::vector<std::shared_ptr<tts::formats::PickleValue>>& {
    return const_cast<tts::formats::PickleValue*>(root.find("adam")->find(key))->items;
  };
  items("exp_avg").at(2)->tensor = torch::full_like(items("exp_avg").at(2)->tensor, NAN);
  e = load_error([&] { checkpoint_from_value(root, path); });
  EXPECT_NE(e.find("parameter 2 exp_avg holds"), std::string::npos) << e;
  EXPECT_NE(e.find("non-finite"), std::string::npos) << e;

  // An infinite weight: refused by restore_model (every loader's matcher), naming the tensor.
  tts::formats::PickleValue weights = tts::formats::read_torch_file(path);
  for (auto& [key, value] :
       const_cast<tts::formats::PickleValue*>(weights.find("model"))->entries) {
    if (key->text == "second.bias") value->tensor = torch::full_like(value->tensor, INFINITY);
  }
  Checkpoint infinite = checkpoint_from_value(weights, path);
  Net fresh(4);
  e = load_error([&] { restore_model(infinite, *fresh, path); });
  EXPECT_NE(e.find("tensor 'second.bias' holds 2 non-finite values"), std::string::npos) << e;
}

TEST(Checkpoint, TemporariesOfKilledSavesAreRemovedAndNothingElse) {
  const std::string dir = tts::test::fresh_dir("ckpt_temporaries");
  auto touch = [&](const std::string& name) { std::ofstream(dir + "/" + name) << "x"; };
  touch("step_00000010.pt.tmp.0123456789abcdef");
  touch("step_7.pt.tmp.fedcba9876543210");
  touch("step_00000010.pt");                     // a checkpoint
  touch("step_00000010.pt.tmp.0123");            // not our temporary's name
  touch("step_1';x;#.pt.tmp.0123456789abcdef");  // not a checkpoint's name
  touch("notes.txt.tmp.0123456789abcdef");       // another file's temporary
  const std::string outside = dir + "/../outside_target";
  std::ofstream(outside) << "keep";
  fs::create_symlink(outside, dir + "/step_3.pt.tmp.00000000000000aa");  // a link: left alone
  fs::create_directory(dir + "/step_4.pt.tmp.00000000000000bb");         // a folder: left alone
  EXPECT_EQ(remove_save_temporaries(dir),
            (std::vector<std::string>{"step_00000010.pt.tmp.0123456789abcdef",
                                      "step_7.pt.tmp.fedcba9876543210"}));
  EXPECT_TRUE(fs::exists(dir + "/step_00000010.pt"));
  EXPECT_TRUE(fs::exists(dir + "/step_00000010.pt.tmp.0123"));
  EXPECT_TRUE(fs::exists(dir + "/step_1';x;#.pt.tmp.0123456789abcdef"));
  EXPECT_TRUE(fs::exists(dir + "/notes.txt.tmp.0123456789abcdef"));
  EXPECT_TRUE(fs::is_symlink(dir + "/step_3.pt.tmp.00000000000000aa"));
  EXPECT_TRUE(fs::is_directory(dir + "/step_4.pt.tmp.00000000000000bb"));
  EXPECT_TRUE(fs::exists(outside));
  EXPECT_TRUE(remove_save_temporaries(dir + "/missing").empty());
}

// The speaker table is written and read as the symbol table is: names in row order, absent (and
// read back empty) for a model without speaker input.
TEST(Checkpoint, TheSpeakerTableRoundTripsInRowOrder) {
  std::string dir = tts::test::fresh_dir("ckpt_speakers");
  Net net(4);
  Checkpoint checkpoint = capture(*net, {}, TrainingState{}, "config: yes\n");
  EXPECT_TRUE(load_checkpoint(save_checkpoint(dir, checkpoint, 5)).speakers.empty());
  checkpoint.state.step = 1;
  checkpoint.speakers = {"p225", "en-gb_m2", "a speaker"};
  Checkpoint loaded = load_checkpoint(save_checkpoint(dir, checkpoint, 5));
  EXPECT_EQ(loaded.speakers, checkpoint.speakers);
  EXPECT_TRUE(loaded.symbols.empty());
}

// Speaking reads a checkpoint's weights and settings alone: the optimizers' states (twice the
// weights with Adam) are neither checked nor kept; resuming reads them all.
TEST(Checkpoint, AWeightsReadSkipsTheOptimizersState) {
  std::string dir = tts::test::fresh_dir("ckpt_weights_read");
  Net net(4);
  torch::optim::Adam adam(net->parameters(), torch::optim::AdamOptions(1e-2));
  train_steps(net, adam, 2);
  TrainingState state;
  state.step = 2;
  const std::string path = dir + "/step_2.pt";
  write_checkpoint(path, capture(*net, {&adam}, state, ""));
  const Checkpoint whole = load_checkpoint(path);
  const Checkpoint weights = load_checkpoint(path, CheckpointRead::kWeights);
  ASSERT_EQ(whole.optimizers.size(), 1u);
  EXPECT_EQ(whole.optimizers[0].params.size(), net->parameters().size());
  EXPECT_TRUE(weights.optimizers.empty());
  EXPECT_EQ(weights.state.step, 2);
  ASSERT_EQ(weights.tensors.size(), whole.tensors.size());
  for (size_t i = 0; i < whole.tensors.size(); ++i) {
    EXPECT_EQ(weights.tensors[i].first, whole.tensors[i].first);
    EXPECT_TRUE(torch::equal(weights.tensors[i].second, whole.tensors[i].second));
  }
  EXPECT_TRUE(load_newest_checkpoint(dir, nullptr, CheckpointRead::kWeights).optimizers.empty());
}
