// A feature store's waveforms/ID.npy as `data check` reads it (check_store: shape, length against
// its mel, finiteness), in a store of one utterance made once (seeds: the small .npy files of
// tests/data).
#include <filesystem>
#include <fstream>
#include <vector>

#include "fuzz_input.h"
#include "tts/config/config.h"
#include "tts/data/store_check.h"
#include "tts/formats/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const tts::config::Config config = [] {
    tts::config::Config c;
    c.audio.waveforms = true;
    return c;
  }();
  static const std::string dir = [] {
    const std::string path = tts::fuzz::input_path("-waveform-store");
    std::filesystem::create_directories(path + "/mels");
    std::filesystem::create_directories(path + "/waveforms");
    const int64_t frames = 4;
    std::vector<float> mel(static_cast<size_t>(frames * config.audio.n_mels), -4.0f);
    tts::formats::write_npy(path + "/mels/u.npy", mel.data(), {frames, config.audio.n_mels});
    const std::string table = "id\tn_frames\tn_samples\tmel\tlinear\twaveform\ttext\nu\t4\t" +
                              std::to_string(frames * config.audio.hop_length) +
                              "\tmels/u.npy\t-\twaveforms/u.npy\ta\n";
    for (const char* list : {"/metadata.tsv", "/train.tsv", "/val.tsv"}) {
      std::ofstream(path + list) << table;
    }
    std::ofstream(path + "/features.yaml") << "tts_train_version: fuzz\n"
                                           << tts::config::dump_sections(config, {"audio", "text"});
    return path;
  }();
  tts::fuzz::write_bytes(dir + "/waveforms/u.npy", data, size);
  tts::fuzz::expect_success_or_error([&] { tts::data::check_store(dir, config); });
  return 0;
}
