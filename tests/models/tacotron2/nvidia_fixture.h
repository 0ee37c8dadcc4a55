// The NVIDIA/tacotron2 reference (tests/data/nvidia_tacotron2_tiny, see tests/data/README.md):
// paths, its config and its arrays as tensors, shared by the tests of the conversion of NVIDIA's
// files.
#pragma once

#include <torch/torch.h>

#include <fstream>
#include <string>
#include <vector>

#include "../../data/store/make_store.h"
#include "tts/config/config.h"
#include "tts/formats/npy.h"
#include "tts/text/text_processor.h"

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
  tts::formats::NpyArray a = tts::formats::read_npy(kDir + "/" + name + ".npy");
  return torch::tensor(a.data).reshape(a.shape);
}

// The fixture's batch as a feature store made with `config` (default: config()): utterance k is
// "nv<k>", its text sentence k of sentences.txt cleaned, its mel mels.npy[k] cut to
// output_lengths[k]; the first `n_val` utterances form the validation set, the others the
// training set.
inline std::string store(const std::string& dir, size_t n_val,
                         const tts::config::Config& store_config = config()) {
  tts::text::TextProcessor text(store_config.text);
  torch::Tensor mels = array("mels");
  torch::Tensor lengths = array("output_lengths").to(torch::kInt64);
  std::vector<tts::test::StoreUtterance> utterances;
  std::ifstream in(kDir + "/sentences.txt");
  std::string sentence;
  for (int64_t k = 0; k < mels.size(0) && std::getline(in, sentence); ++k) {
    utterances.push_back(
        {"nv" + std::to_string(k), lengths[k].item<int64_t>(), text.clean(sentence)});
  }
  tts::test::make_store(dir, store_config, utterances, n_val);
  for (size_t k = 0; k < utterances.size(); ++k) {
    torch::Tensor mel =
        mels[static_cast<int64_t>(k)].narrow(1, 0, utterances[k].frames).t().contiguous();
    tts::formats::write_npy(dir + "/mels/" + utterances[k].id + ".npy", mel.data_ptr<float>(),
                            mel.sizes().vec());
  }
  return dir;
}

// max |ours - reference| / max |reference|, the parity measure.
inline double relative_error(const torch::Tensor& ours, const torch::Tensor& reference) {
  return ((ours - reference).abs().max() / reference.abs().max()).item<double>();
}

}  // namespace nvidia_fixture
