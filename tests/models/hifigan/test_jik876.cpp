// jik876/hifi-gan's files in and out: its config.json mapped to our sections, import -> export ->
// import bit for bit, refusals naming the key and both shapes, and jik876's own Python loading
// our export (when a Python with torch, TTS_PEER_PYTHON or /usr/bin/python3, and a checkout named
// by TTS_HIFIGAN_DIR are here).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>

#include "../../cli/cli_test_util.h"
#include "../../support/peer_python.h"
#include "../../support/scratch.h"
#include "tts/checkpoint/state_dict.h"
#include "tts/core/error.h"
#include "tts/formats/torch_file.h"
#include "tts/models/hifigan/conversion/jik876.h"
#include "tts/models/hifigan/layers/discriminators.h"
#include "tts/models/hifigan/layers/generator.h"
#include "tts/models/hifigan/layers/parameter_count.h"

namespace fs = std::filesystem;
using namespace tts::hifigan;

namespace {

std::string shared_dir() { return std::string(TTS_TEST_DATA_DIR) + "/vocoders/shared"; }

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
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// shared/hifigan_config.json with `from` replaced by `to`, as a file of the scratch folder.
std::string edited_config(const std::string& name, const std::string& from, const std::string& to) {
  std::string text = read_text(shared_dir() + "/hifigan_config.json");
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  return tts::test::write_temp(name, text);
}

std::map<std::string, torch::Tensor> tensors_of(torch::nn::Module& module) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& p : module.named_parameters()) out[p.key()] = p.value().detach().clone();
  for (const auto& b : module.named_buffers()) out[b.key()] = b.value().detach().clone();
  return out;
}

void expect_identical(const std::map<std::string, torch::Tensor>& a,
                      const std::map<std::string, torch::Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, tensor] : a) {
    ASSERT_EQ(b.count(name), 1u) << name;
    EXPECT_EQ(tensor.scalar_type(), b.at(name).scalar_type()) << name;
    EXPECT_TRUE(torch::equal(tensor, b.at(name))) << name;
  }
}

// The shared fixture's generator with discriminators, AdamW states and counters added: what
// jik876's train.py would have saved at step 1234 of epoch 5.
struct Exported {
  tts::config::Config config;
  HifiganImport original;
  std::string dir;
};

Exported export_shared(const std::string& name) {
  Exported out;
  out.config = hifigan_config_from_json(shared_dir() + "/hifigan_config.json", {});
  out.original = import_jik876(shared_dir() + "/hifigan_g.pt", "", "", out.config);
  MultiPeriodDiscriminator mpd;
  MultiScaleDiscriminator msd;
  out.original.mpd = tensors_of(*mpd);
  out.original.msd = tensors_of(*msd);
  Generator generator(out.config.hifigan, out.config.audio.n_mels);
  AdamState optim_g;
  optim_g.lr = 1.9e-4;
  optim_g.initial_lr = 2e-4;
  for (const torch::Tensor& p : generator->parameters()) {
    optim_g.params.push_back({torch::randn(p.sizes()), torch::rand(p.sizes()), 1234});
  }
  out.original.optim_g = optim_g;
  out.original.steps = 1234;
  out.original.epoch = 5;
  out.dir = tts::test::fresh_dir(name);
  export_jik876(out.original, out.dir, out.config);
  return out;
}

}  // namespace

TEST(HifiganInterop, ConfigJsonMapsJik876Keys) {
  const tts::config::Config c = hifigan_config_from_json(shared_dir() + "/hifigan_config.json", {});
  EXPECT_EQ(c.model.kind, tts::config::ModelKind::kHifigan);
  EXPECT_EQ(c.hifigan.resblock, tts::config::HifiganResblock::k2);
  EXPECT_EQ(c.hifigan.upsample_rates, (std::vector<int>{8, 8, 4}));
  EXPECT_EQ(c.hifigan.resblock_dilation_sizes,
            (std::vector<std::vector<int>>{{1, 2}, {2, 6}, {3, 12}}));
  EXPECT_EQ(c.hifigan.fmax_for_loss, 0);  // null
  EXPECT_EQ(c.audio.hop_length, 256);
  EXPECT_EQ(c.audio.n_mels, 80);
  EXPECT_EQ(c.train.adam_beta1, 0.8);
  EXPECT_EQ(c.train.lr_decay_rate, 0.999);
  EXPECT_EQ(c.train.optimizer, tts::config::Optimizer::kAdamW);
  EXPECT_EQ(c.train.weight_decay, 0.01);
  EXPECT_EQ(c.train.adam_eps, 1e-8);
  EXPECT_EQ(c.train.lr_schedule, tts::config::LrSchedule::kPerEpoch);
  EXPECT_EQ(c.train.grad_clip_thresh, 0);
}

TEST(HifiganInterop, ConfigJsonRefusals) {
  std::string e = error_of(
      [] { hifigan_config_from_json(edited_config("unknown.json", "\"seed\"", "\"seeed\""), {}); });
  EXPECT_NE(e.find("unknown key 'seeed'"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown.json"), std::string::npos) << e;
  e = error_of([] {
    hifigan_config_from_json(edited_config("number.json", "\"resblock\": \"2\"", "\"resblock\": 1"),
                             {});
  });
  EXPECT_NE(e.find("resblock must be the string"), std::string::npos) << e;
  e = error_of([] {
    hifigan_config_from_json(edited_config("hop.json", "\"hop_size\": 256", "\"hop_size\": 200"),
                             {});
  });
  EXPECT_NE(e.find("hifigan.upsample_rates"), std::string::npos) << e;
  e = error_of([] {
    hifigan_config_from_json(edited_config("type.json", "\"upsample_initial_channel\": 64",
                                           "\"upsample_initial_channel\": \"x\""),
                             {});
  });
  EXPECT_NE(e.find("upsample_initial_channel"), std::string::npos) << e;
}

TEST(HifiganInterop, ImportExportImportIsBitForBit) {
  const Exported e = export_shared("round_trip");
  EXPECT_TRUE(fs::exists(e.dir + "/g_00001234"));
  EXPECT_TRUE(fs::exists(e.dir + "/config.json"));
  const HifiganImport back =
      import_jik876(e.dir + "/g_00001234", e.dir + "/do_00001234", e.dir + "/config.json", {});
  expect_identical(back.generator, e.original.generator);
  expect_identical(back.mpd, e.original.mpd);
  expect_identical(back.msd, e.original.msd);
  EXPECT_EQ(back.steps, 1234);
  EXPECT_EQ(back.epoch, 5);
  ASSERT_TRUE(back.optim_g && back.optim_d);
  EXPECT_EQ(back.optim_g->lr, 1.9e-4);
  EXPECT_EQ(back.optim_g->initial_lr, 2e-4);
  ASSERT_EQ(back.optim_g->params.size(), e.original.optim_g->params.size());
  for (size_t i = 0; i < back.optim_g->params.size(); ++i) {
    EXPECT_TRUE(
        torch::equal(back.optim_g->params[i].exp_avg, e.original.optim_g->params[i].exp_avg));
    EXPECT_TRUE(
        torch::equal(back.optim_g->params[i].exp_avg_sq, e.original.optim_g->params[i].exp_avg_sq));
    EXPECT_EQ(back.optim_g->params[i].step, 1234);
  }
  // No state given for the discriminators' optimizer: a fresh one, which jik876's code accepts.
  EXPECT_FALSE(back.optim_d->params.at(0).exp_avg.defined());
  EXPECT_EQ(back.optim_d->lr, e.config.train.learning_rate);
  // The config round-trips too.
  EXPECT_EQ(back.hifigan.upsample_rates, e.config.hifigan.upsample_rates);
  EXPECT_EQ(back.audio.hop_length, e.config.audio.hop_length);
  EXPECT_EQ(back.train.adam_beta2, e.config.train.adam_beta2);
  fs::remove_all(e.dir);  // the discriminators take half a gigabyte
}

TEST(HifiganInterop, ShapeMismatchNamesKeyAndShapes) {
  const std::string config = edited_config("narrow.json", "\"upsample_initial_channel\": 64",
                                           "\"upsample_initial_channel\": 32");
  const std::string e =
      error_of([&] { import_jik876(shared_dir() + "/hifigan_g.pt", "", config, {}); });
  EXPECT_NE(e.find("conv_pre.weight_v (checkpoint 64x80x7, model 32x80x7)"), std::string::npos)
      << e;
  EXPECT_NE(e.find("hifigan_g.pt"), std::string::npos) << e;
  EXPECT_NE(e.find("narrow.json"), std::string::npos) << e;
}

TEST(HifiganInterop, ExportRefusesWhatJik876CannotLoad) {
  tts::config::Config config = hifigan_config_from_json(shared_dir() + "/hifigan_config.json", {});
  config.audio.n_mels = 64;
  Jik876State state;
  const std::string e =
      error_of([&] { export_jik876(state, tts::test::fresh_dir("refused"), config); });
  EXPECT_NE(e.find("reads 80 mel channels"), std::string::npos) << e;
}

TEST(HifiganInterop, Jik876LoadsOurExport) {
  const char* checkout = std::getenv("TTS_HIFIGAN_DIR");
  if (checkout == nullptr || !fs::exists(fs::path(checkout) / "models.py")) {
    GTEST_SKIP() << "TTS_HIFIGAN_DIR does not name a checkout of jik876/hifi-gan (with models.py)";
  }
  const std::string python = tts::test::peer_python();
  if (tts::test::run_shell(python + " -c 'import torch, numpy' 2>/dev/null").exit_code != 0) {
    GTEST_SKIP() << python << " with torch and numpy is not installed (TTS_PEER_PYTHON names "
                 << "another)";
  }
  const Exported e = export_shared("for_jik876");
  // jik876's train.py resume path and inference: strict loads, both optimizers, the scheduler.
  const std::string script = tts::test::write_temp("load_export.py", R"(
import json, sys
import numpy as np
import torch
data, checkout, out = sys.argv[1:4]
sys.path.insert(0, data + "/vocoders")
import jik876_stubs
jik876_stubs.install(checkout)
import itertools
import models
from env import AttrDict
h = AttrDict(json.load(open(out + "/config.json")))
g = models.Generator(h)
g.load_state_dict(torch.load(out + "/g_00001234", map_location="cpu")["generator"], strict=True)
g.eval()
with torch.no_grad():
    audio = g(torch.from_numpy(np.load(data + "/vocoders/shared/hifigan_mel.npy")))
expected = np.load(data + "/vocoders/shared/hifigan_audio.npy")
do = torch.load(out + "/do_00001234", map_location="cpu")
mpd, msd = models.MultiPeriodDiscriminator(), models.MultiScaleDiscriminator()
mpd.load_state_dict(do["mpd"], strict=True)
msd.load_state_dict(do["msd"], strict=True)
optim_g = torch.optim.AdamW(g.parameters(), h.learning_rate, betas=[h.adam_b1, h.adam_b2])
optim_d = torch.optim.AdamW(itertools.chain(msd.parameters(), mpd.parameters()), h.learning_rate,
                            betas=[h.adam_b1, h.adam_b2])
optim_g.load_state_dict(do["optim_g"])
optim_d.load_state_dict(do["optim_d"])
torch.optim.lr_scheduler.ExponentialLR(optim_g, gamma=h.lr_decay, last_epoch=do["epoch"])
torch.optim.lr_scheduler.ExponentialLR(optim_d, gamma=h.lr_decay, last_epoch=do["epoch"])
assert do["steps"] == 1234 and do["epoch"] == 5
print("max_abs", float(np.abs(audio.numpy() - expected).max()))
)");
  const tts::test::CliResult r = tts::test::run_shell(
      fmt::format("{} {} {} {} {} 2>&1", python, script, TTS_TEST_DATA_DIR, checkout, e.dir));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const size_t at = r.output.find("max_abs ");
  ASSERT_NE(at, std::string::npos) << r.output;
  EXPECT_LT(std::stod(r.output.substr(at + 8)), 1e-5) << r.output;
  fs::remove_all(e.dir);
}

TEST(HifiganInterop, ConfigsEqualJik876s) {
  const char* checkout = std::getenv("TTS_HIFIGAN_DIR");
  if (checkout == nullptr || !fs::exists(fs::path(checkout) / "config_v1.json")) {
    GTEST_SKIP() << "TTS_HIFIGAN_DIR does not name a checkout of jik876/hifi-gan (config_v1.json)";
  }
  for (const std::string v : {"v1", "v2", "v3"}) {
    const tts::config::Config ours =
        tts::config::load_config(std::string(TTS_SOURCE_DIR) + "/configs/hifigan_" + v + ".yaml");
    // jik876's file applied over ours changes nothing when ours says the same.
    const tts::config::Config theirs =
        hifigan_config_from_json(fmt::format("{}/config_{}.json", checkout, v), ours);
    EXPECT_EQ(tts::config::dump_config(ours), tts::config::dump_config(theirs)) << v;
  }
}

namespace {

// The shared fixture's generator with narrow discriminators (divisor 8) and AdamW states whose
// second moments `edit` may spoil, exported as jik876 saves it; returns the folder.
std::string export_with_state(const std::string& name,
                              const std::function<void(AdamState&)>& edit) {
  tts::config::Config base;
  base.hifigan.discriminator_divisor = 8;
  const tts::config::Config config =
      hifigan_config_from_json(shared_dir() + "/hifigan_config.json", base);
  Jik876State state;
  const HifiganImport generator = import_jik876(shared_dir() + "/hifigan_g.pt", "", "", config);
  state.generator = generator.generator;
  MultiPeriodDiscriminator mpd(8);
  MultiScaleDiscriminator msd(8);
  state.mpd = tensors_of(*mpd);
  state.msd = tensors_of(*msd);
  Generator network(config.hifigan, config.audio.n_mels);
  AdamState optim_g;
  optim_g.lr = optim_g.initial_lr = 2e-4;
  for (const torch::Tensor& p : network->parameters()) {
    optim_g.params.push_back({torch::randn(p.sizes()), torch::rand(p.sizes()), 10});
  }
  edit(optim_g);
  state.optim_g = optim_g;
  state.steps = 10;
  const std::string dir = tts::test::fresh_dir(name);
  export_jik876(state, dir, config);
  return dir;
}

}  // namespace

TEST(HifiganInterop, OptimizerStateThatIsNotFiniteOrHasNegativeSecondMomentsIsRefusedByName) {
  const std::string sound = export_with_state("sound_state", [](AdamState&) {});
  EXPECT_NO_THROW(
      import_jik876(sound + "/g_00000010", sound + "/do_00000010", sound + "/config.json", {}));
  const std::string negative = export_with_state(
      "negative_state", [](AdamState& s) { s.params.at(3).exp_avg_sq.view({-1})[0] = -1.0f; });
  std::string e = error_of([&] {
    import_jik876(negative + "/g_00000010", negative + "/do_00000010", negative + "/config.json",
                  {});
  });
  EXPECT_NE(e.find("optim_g state 3 (generator."), std::string::npos) << e;
  EXPECT_NE(e.find("exp_avg_sq holds 1 negative value"), std::string::npos) << e;
  EXPECT_NE(e.find(negative + "/do_00000010"), std::string::npos) << e;
  const std::string nan = export_with_state(
      "nan_state", [](AdamState& s) { s.params.at(0).exp_avg.view({-1})[5] = NAN; });
  e = error_of(
      [&] { import_jik876(nan + "/g_00000010", nan + "/do_00000010", nan + "/config.json", {}); });
  EXPECT_NE(e.find("optim_g state 0 (generator.conv_pre."), std::string::npos) << e;
  EXPECT_NE(e.find("exp_avg holds 1 non-finite value"), std::string::npos) << e;
  const std::string rate = export_with_state("nan_rate", [](AdamState& s) { s.lr = NAN; });
  e = error_of([&] {
    import_jik876(rate + "/g_00000010", rate + "/do_00000010", rate + "/config.json", {});
  });
  EXPECT_NE(e.find("learning rate nan"), std::string::npos) << e;
}

TEST(HifiganInterop, AGeneratorFileWithANonFiniteWeightIsRefusedByName) {
  tts::formats::PickleValue root = tts::formats::read_torch_file(shared_dir() + "/hifigan_g.pt");
  for (auto& [key, value] :
       const_cast<tts::formats::PickleValue*>(root.find("generator"))->entries) {
    if (key->text == "conv_post.bias") value->tensor = torch::full({1}, NAN);
  }
  const std::string path = tts::test::fresh_dir("nan_generator") + "/g_00000001";
  tts::formats::write_torch_file(path, root);
  const std::string e =
      error_of([&] { import_jik876(path, "", shared_dir() + "/hifigan_config.json", {}); });
  EXPECT_NE(e.find("tensor 'conv_post.bias' holds 1 non-finite value"), std::string::npos) << e;
  EXPECT_NE(e.find(path), std::string::npos) << e;
}

TEST(HifiganInterop, ConfigJsonIsReadAsJsonWithinBounds) {
  // Aliased nested lists (a YAML bomb of 450,000 levels once expanded) are no JSON.
  std::string aliases = "{\"resblock\": \"1\", \"upsample_rates\": &a [1";
  for (int i = 0; i < 2000; ++i) aliases += ", &a" + std::to_string(i) + " [*a]";
  std::string e = error_of(
      [&] { hifigan_config_from_json(tts::test::write_temp("alias.json", aliases + "]}"), {}); });
  EXPECT_NE(e.find("alias.json line 1: not valid JSON"), std::string::npos) << e;
  e = error_of([&] {
    hifigan_config_from_json(
        edited_config("deep.json", "\"seed\": 1",
                      "\"seed\": " + std::string(450000, '[') + std::string(450000, ']')),
        {});
  });
  EXPECT_NE(e.find("nest deeper than 16 levels"), std::string::npos) << e;
  // A config asking for a 100 GB generator is refused by its figure, naming the file.
  const std::string both = [&] {
    std::string text = read_text(shared_dir() + "/hifigan_config.json");
    for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
             {"\"upsample_initial_channel\": 64", "\"upsample_initial_channel\": 8192"},
             {"  3,\n  5,\n  7\n", "  255, 255, 255\n"}}) {
      text.replace(text.find(from), from.size(), to);
    }
    return tts::test::write_temp("huge_generator.json", text);
  }();
  e = error_of([&] { hifigan_config_from_json(both, {}); });
  EXPECT_NE(e.find("huge_generator.json"), std::string::npos) << e;
  EXPECT_NE(e.find("past the limit"), std::string::npos) << e;
  EXPECT_NE(e.find("hifigan.upsample_initial_channel"), std::string::npos) << e;
}

TEST(HifiganInterop, AWindowOfPartFramesIsCutToWholeFrames) {
  // jik876 trains hop 200 (e.g. 16 kHz) with segment_size 8192: 40.96 frames, cut to 40.
  std::string text = read_text(shared_dir() + "/hifigan_config.json");
  for (const auto& [from, to] :
       std::vector<std::pair<std::string, std::string>>{{"\"hop_size\": 256", "\"hop_size\": 200"},
                                                        {"\"win_size\": 1024", "\"win_size\": 800"},
                                                        {"  8,\n  8,\n  4\n", "  10, 5, 4\n"},
                                                        {"  16,\n  16,\n  8\n", "  20, 11, 8\n"}}) {
    const size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  }
  const tts::config::Config c =
      hifigan_config_from_json(tts::test::write_temp("hop200.json", text), {});
  EXPECT_EQ(c.audio.hop_length, 200);
  EXPECT_EQ(c.hifigan.segment_size, 8000);
  EXPECT_EQ(c.hifigan.upsample_rates, (std::vector<int>{10, 5, 4}));
}

TEST(HifiganInterop, TheParameterCountFromTheConfigIsTheBuiltGenerators) {
  for (const char* dir : {"shared", "resblock1_hop100"}) {
    const tts::config::Config c = hifigan_config_from_json(
        std::string(TTS_TEST_DATA_DIR) + "/vocoders/" + dir + "/hifigan_config.json", {});
    Generator generator(c.hifigan, c.audio.n_mels);
    int64_t built = 0;
    for (const torch::Tensor& p : generator->parameters()) built += p.numel();
    EXPECT_EQ(parameter_count(c), static_cast<double>(built)) << dir;
  }
  tts::config::Config v1;  // jik876's V1: 13.9 million
  Generator generator(v1.hifigan, v1.audio.n_mels);
  int64_t built = 0;
  for (const torch::Tensor& p : generator->parameters()) built += p.numel();
  EXPECT_EQ(parameter_count(v1), static_cast<double>(built));
}
