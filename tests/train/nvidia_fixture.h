// The NVIDIA/tacotron2 reference (tests/data/nvidia_tacotron2_tiny, see tests/data/README.md):
// paths, its config and its arrays as tensors, shared by the NVIDIA interoperation tests.
#pragma once

#include <torch/torch.h>

#include <string>

#include "tts/config/config.h"
#include "tts/core/npy.h"

namespace nvidia_fixture {

inline const std::string kDir = std::string(TTS_TEST_DATA_DIR) + "/nvidia_tacotron2_tiny";
inline const std::string kCheckpoint = kDir + "/checkpoint.pt";
inline const std::string kConfig = kDir + "/config.yaml";

// The model of hparams.json with the prenet's dropout off, as the reference was computed.
inline tts::config::Config config() {
  return tts::config::load_config(kConfig, {"model.p_prenet_dropout=0"});
}

// fixture/NAME.npy as a float32 tensor of its shape.
inline torch::Tensor array(const std::string& name) {
  tts::NpyArray a = tts::read_npy(kDir + "/" + name + ".npy");
  return torch::tensor(a.data).reshape(a.shape);
}

// max |ours - reference| / max |reference|, the parity measure.
inline double relative_error(const torch::Tensor& ours, const torch::Tensor& reference) {
  return ((ours - reference).abs().max() / reference.abs().max()).item<double>();
}

}  // namespace nvidia_fixture
