// A feature store's features.yaml for read_store_settings (seeds: the features.yaml of the test
// stores, the hostile ones of tests/data/untrusted/).
#include <filesystem>

#include "fuzz_input.h"
#include "tts/data/feature_store.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = [] {
    std::string path = tts::fuzz::input_path("-store");
    std::filesystem::create_directories(path);
    return path;
  }();
  tts::fuzz::write_bytes(dir + "/features.yaml", data, size);
  tts::fuzz::expect_success_or_error([&] { tts::data::read_store_settings(dir); });
  return 0;
}
