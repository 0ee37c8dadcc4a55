// Helpers shared by the audio tests: reference data paths, .npy <-> tensor, error measures.
#pragma once

#include <gtest/gtest.h>
#include <torch/torch.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "tts/config/audio_options.h"
#include "tts/formats/npy.h"

namespace tts::audio::testing {

inline std::string data_path(const std::string& name) {
  return std::string(TTS_TEST_DATA_DIR) + "/audio/" + name;
}

inline std::string tmp_path(const std::string& name) {
  std::string dir = std::string(TTS_TEST_TMP_DIR) + "/audio";
  std::system(("mkdir -p " + dir).c_str());
  return dir + "/" + name;
}

// A reference array as a tensor (tts::formats::read_npy also takes the Fortran-ordered arrays
// librosa saves, returning C order).
inline torch::Tensor load_npy(const std::string& path) {
  formats::NpyArray array = formats::read_npy(path);
  return torch::from_blob(array.data.data(), array.shape, torch::kFloat32).clone();
}

// ||a - b|| / ||b|| in double.
inline double relative_error(const torch::Tensor& a, const torch::Tensor& b) {
  torch::Tensor x = a.to(torch::kFloat64);
  torch::Tensor y = b.to(torch::kFloat64);
  return ((x - y).norm() / y.norm()).item<double>();
}

inline double max_abs_error(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kFloat64) - b.to(torch::kFloat64)).abs().max().item<double>();
}

// The options of a reference case, from its CASE.json (written by the script that produced the
// librosa references; YAML reads JSON).
inline config::AudioOptions reference_options(const std::string& name) {
  YAML::Node json = YAML::LoadFile(data_path(name + ".json"));
  config::AudioOptions o;
  o.sample_rate = json["sample_rate"].as<int>();
  o.n_fft = json["n_fft"].as<int>();
  o.hop_length = json["hop"].as<int>();
  o.win_length = json["win"].as<int>();
  o.n_mels = json["n_mels"].as<int>();
  o.fmin = json["fmin"].as<double>();
  o.fmax = json["fmax"].as<double>();
  o.mel_scale = json["htk"].as<bool>() ? config::MelScale::kHtk : config::MelScale::kSlaney;
  o.mel_norm = json["mel_norm"].as<std::string>() == "slaney" ? config::MelNorm::kSlaney
                                                              : config::MelNorm::kNone;
  o.pad_mode =
      config::require_choice<config::PadMode>(json["pad_mode"].as<std::string>(), "pad_mode");
  o.magnitude_power = json["magnitude_power"].as<double>();
  o.preemphasis = json["preemphasis"].as<double>();
  o.compression = config::require_choice<config::Compression>(json["compression"].as<std::string>(),
                                                              "compression");
  if (json["ref_level_db"]) o.ref_level_db = json["ref_level_db"].as<double>();
  if (json["min_level_db"]) o.min_level_db = json["min_level_db"].as<double>();
  if (json["max_abs_value"]) o.max_abs_value = json["max_abs_value"].as<double>();
  o.signal_normalization = true;
  o.symmetric = true;
  o.allow_clipping = true;
  o.trim = true;
  o.trim_top_db = json["trim_top_db"].as<double>();
  o.trim_frame_length = json["trim_frame"].as<int>();
  o.trim_hop_length = json["trim_hop"].as<int>();
  o.validate();
  return o;
}

inline std::vector<float> sine(double hz, double seconds, int sample_rate, double amplitude) {
  std::vector<float> samples(static_cast<size_t>(seconds * sample_rate));
  for (size_t i = 0; i < samples.size(); ++i) {
    samples[i] = static_cast<float>(amplitude * std::sin(2 * M_PI * hz * i / sample_rate));
  }
  return samples;
}

}  // namespace tts::audio::testing
