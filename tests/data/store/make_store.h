// Builds small feature stores for the data tests, in the layout `tts-train preprocess` writes
// (see include/tts/data/feature_store.h), so the tests do not depend on preprocess.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "tts/config/config.h"
#include "tts/formats/npy.h"

namespace tts::test {

struct StoreUtterance {
  std::string id;
  int64_t frames;
  std::string text;
};

// Value of bin `b` of frame `t` of the `index`-th utterance's mel (linear: negated), so tests can
// check where every value went.
inline float feature_value(size_t index, int64_t t, int64_t b) {
  return static_cast<float>(index + 1) + 0.001f * static_cast<float>(t) +
         1e-6f * static_cast<float>(b);
}

// Sample `s` of the `index`-th utterance's waveform (audio.waveforms).
inline float waveform_value(size_t index, int64_t s) {
  return static_cast<float>(index + 1) * 0.01f + 1e-6f * static_cast<float>(s);
}

// Samples of an utterance of `frames` centered frames: frame t covers sample t * hop, the last
// frame's window runs past the signal's end.
inline int64_t samples_of(int64_t frames, const config::Config& config) {
  return (frames - 1) * config.audio.hop_length + config.audio.hop_length / 2;
}

// The tables' text: without a waveform column (as older stores) unless audio.waveforms.
inline std::string tsv(const std::vector<StoreUtterance>& list, const config::Config& config) {
  const bool waveforms = config.audio.waveforms;
  std::string text = waveforms ? "id\tn_frames\tn_samples\tmel\tlinear\twaveform\ttext\n"
                               : "id\tn_frames\tn_samples\tmel\tlinear\ttext\n";
  for (const auto& u : list) {
    text += u.id + "\t" + std::to_string(u.frames) + "\t" +
            std::to_string(waveforms ? samples_of(u.frames, config)
                                     : u.frames * config.audio.hop_length) +
            "\tmels/" + u.id + ".npy\t" +
            (config.audio.linear ? "linear/" + u.id + ".npy" : std::string("-")) + "\t" +
            (waveforms ? "waveforms/" + u.id + ".npy\t" : std::string()) + u.text + "\n";
  }
  return text;
}

// Writes a store made with `config`'s audio and text settings under `dir` (replacing it): the
// first `n_val` utterances go to val.tsv, the rest to train.tsv.
inline std::string make_store(const std::string& dir, const config::Config& config,
                              const std::vector<StoreUtterance>& utterances, size_t n_val = 0) {
  std::system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "/mels' '" + dir + "/linear' '" + dir +
               "/waveforms'")
                  .c_str());
  for (size_t i = 0; i < utterances.size(); ++i) {
    const auto& u = utterances[i];
    int64_t n_mels = config.audio.n_mels, n_linear = config.audio.n_linear();
    std::vector<float> mel(u.frames * n_mels), linear(u.frames * n_linear);
    for (int64_t t = 0; t < u.frames; ++t) {
      for (int64_t b = 0; b < n_mels; ++b) mel[t * n_mels + b] = feature_value(i, t, b);
      for (int64_t b = 0; b < n_linear; ++b) linear[t * n_linear + b] = -feature_value(i, t, b);
    }
    formats::write_npy(dir + "/mels/" + u.id + ".npy", mel.data(), {u.frames, n_mels});
    if (config.audio.linear) {
      formats::write_npy(dir + "/linear/" + u.id + ".npy", linear.data(), {u.frames, n_linear});
    }
    if (config.audio.waveforms) {
      std::vector<float> wave(static_cast<size_t>(samples_of(u.frames, config)));
      for (size_t s = 0; s < wave.size(); ++s) wave[s] = waveform_value(i, static_cast<int64_t>(s));
      formats::write_npy(dir + "/waveforms/" + u.id + ".npy", wave.data(),
                         {static_cast<int64_t>(wave.size())});
    }
  }
  std::vector<StoreUtterance> val(utterances.begin(), utterances.begin() + n_val);
  std::vector<StoreUtterance> train(utterances.begin() + n_val, utterances.end());
  std::ofstream(dir + "/metadata.tsv") << tsv(utterances, config);
  std::ofstream(dir + "/train.tsv") << tsv(train, config);
  std::ofstream(dir + "/val.tsv") << tsv(val, config);
  std::ofstream(dir + "/features.yaml")
      << "tts_train_version: " << TTS_VERSION << "\n"
      << config::dump_sections(config, {"audio", "text"})
      << "\ncounts: {inputs: " << utterances.size() << ", written: " << utterances.size()
      << "}\nresampled_files: 0\n";
  return dir;
}

// `n` utterances "u000".. with lengths 10 + (i * 37) % 90 frames and texts of matching length.
inline std::vector<StoreUtterance> varied_utterances(int n) {
  std::vector<StoreUtterance> list;
  for (int i = 0; i < n; ++i) {
    char id[16];
    std::snprintf(id, sizeof(id), "u%03d", i);
    int64_t frames = 10 + (i * 37) % 90;
    list.push_back({id, frames, std::string(static_cast<size_t>(3 + frames / 10), 'a')});
  }
  return list;
}

inline std::string temp_dir(const std::string& name) {
  return std::string(TTS_TEST_TMP_DIR) + "/" + name;
}

}  // namespace tts::test
