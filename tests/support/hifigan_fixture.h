// The HiFi-GAN training-step fixture (tests/data/vocoders/step/, made by make_hifigan_step.py
// with jik876/hifi-gan's train.py loop): its entries by name, its config, and the formula that
// gave its initial weights, so that a test starts from the same networks without the 70 M
// discriminator parameters stored.
#pragma once

#include <torch/torch.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "tts/config/config.h"
#include "tts/core/error.h"
#include "tts/formats/torch_file.h"
#include "tts/models/hifigan/conversion/jik876.h"

namespace tts::test::hifigan {

inline std::string step_fixture_dir() { return std::string(TTS_TEST_DATA_DIR) + "/vocoders/step"; }

// make_hifigan_step.py's uniform(name, n)[i]: splitmix64 of i * golden + fnv1a32(name), 24 bits.
inline double formula_uniform(uint32_t seed, uint64_t i) {
  uint64_t z = i * 0x9E3779B97F4A7C15ull + seed;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 40) / 16777216.0;
}

inline uint32_t fnv1a32(const std::string& text) {
  uint32_t h = 0x811C9DC5u;
  for (unsigned char c : text) h = (h ^ c) * 0x01000193u;
  return h;
}

// Overwrites every parameter and buffer of `module` with make_hifigan_step.py's formula for the
// name `prefix` + its key ("generator.", "mpd.", "msd.").
inline void fill_from_formula(torch::nn::Module& module, const std::string& prefix) {
  torch::NoGradGuard no_grad;
  auto fill = [&](const std::string& key, torch::Tensor& t) {
    const std::string last = key.substr(key.rfind('.') + 1);
    const uint32_t seed = fnv1a32(prefix + key);
    const int64_t n = t.numel();
    const double fan_in = static_cast<double>(n) / static_cast<double>(t.size(0));
    torch::Tensor values = torch::empty({n}, torch::kFloat32);
    float* out = values.data_ptr<float>();
    for (int64_t i = 0; i < n; ++i) {
      const double u = 2 * formula_uniform(seed, static_cast<uint64_t>(i)) - 1;
      double value;
      if ((last == "weight_u" || last == "weight_v") && t.dim() == 1) {
        value = u;
      } else if (last == "weight_v" || last == "weight_orig") {
        value = u / std::sqrt(fan_in);
      } else if (last == "weight_g") {
        value = 0.6 + 0.2 * u;
      } else if (last == "bias") {
        value = 0.05 * u;
      } else {
        throw Error("fill_from_formula: no formula for " + prefix + key);
      }
      out[i] = static_cast<float>(value);
    }
    t.copy_(values.view(t.sizes()));
  };
  for (auto& p : module.named_parameters()) fill(p.key(), p.value());
  for (auto& b : module.named_buffers()) fill(b.key(), b.value());
}

// step.pt's entries and the config of its config.json.
class StepFixture {
 public:
  StepFixture()
      : root_(formats::read_torch_file(step_fixture_dir() + "/step.pt")),
        config_(tts::hifigan::hifigan_config_from_json(step_fixture_dir() + "/config.json",
                                                       config::Config{})) {}
  const config::Config& config() const { return config_; }
  torch::Tensor tensor(const std::string& key) const {
    const formats::PickleValue& v = get(key);
    TTS_CHECK(v.kind == formats::PickleValue::Kind::Tensor, "step.pt: '{}' is no tensor", key);
    return v.tensor;
  }
  double number(const std::string& key) const {
    const formats::PickleValue& v = get(key);
    TTS_CHECK(v.kind == formats::PickleValue::Kind::Float, "step.pt: '{}' is no float", key);
    return v.real;
  }
  bool has(const std::string& key) const { return root_.find(key) != nullptr; }

 private:
  const formats::PickleValue& get(const std::string& key) const {
    const formats::PickleValue* v = root_.find(key);
    TTS_CHECK(v != nullptr, "step.pt has no '{}'", key);
    return *v;
  }
  formats::PickleValue root_;
  config::Config config_;
};

}  // namespace tts::test::hifigan
