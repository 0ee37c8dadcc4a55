// The WaveNet fixtures of tests/data/vocoders (made with r9y9/wavenet_vocoder's own code: README
// there): a checkpoint with its hparams, inputs and r9y9's outputs for them.
#pragma once

#include <gtest/gtest.h>
#include <torch/torch.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tts/formats/npy.h"
#include "tts/models/wavenet/conversion/r9y9.h"
#include "tts/models/wavenet/layers/network.h"

namespace wavenet_fixture {

// The fixture prefixes: r9y9's shared one and our variants of other shapes.
inline const std::vector<std::string>& names() {
  static const std::vector<std::string> all{"wavenet", "wavenet_normal", "wavenet_gaussian",
                                            "wavenet_logistic"};
  return all;
}

inline std::string path(const std::string& name, const std::string& suffix) {
  return std::string(TTS_TEST_DATA_DIR) + "/vocoders/" + name + suffix;
}

inline torch::Tensor npy(const std::string& file) {
  tts::formats::NpyArray array = tts::formats::read_npy(file);
  return torch::from_blob(array.data.data(), array.shape, torch::kFloat).clone();
}

struct Fixture {
  tts::wavenet::WavenetImport imported;
  tts::wavenet::WaveNet model{nullptr};  // the checkpoint loaded, eval mode
  torch::Tensor x;                       // [B, 1, T]
  torch::Tensor c;                       // [B, n_mels, frames + 2*cin_pad]
  torch::Tensor g;                       // int64 speaker ids [B], or undefined
  torch::Tensor y_hat;                   // r9y9's forward(x, c, g)
  double loss = 0;                       // r9y9's summed loss of y_hat against x
};

inline Fixture load(const std::string& name) {
  Fixture f;
  f.imported = tts::wavenet::import_r9y9(path(name, ".pth"), path(name, "_hparams.json"));
  f.model = tts::wavenet::WaveNet(f.imported.wavenet, f.imported.audio.n_mels);
  tts::wavenet::load_wavenet_state_dict(*f.model, f.imported.tensors, name);
  f.model->eval();
  f.x = npy(path(name, "_x.npy"));
  f.c = npy(path(name, "_c.npy"));
  f.y_hat = npy(path(name, "_y_hat.npy"));
  if (std::filesystem::exists(path(name, "_g.npy")))
    f.g = npy(path(name, "_g.npy")).to(torch::kLong);
  YAML::Node meta = YAML::LoadFile(path(name, "_meta.json"));
  f.loss = (meta["mol_loss"] ? meta["mol_loss"] : meta["loss"]).as<double>();
  return f;
}

inline double max_abs(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

}  // namespace wavenet_fixture
