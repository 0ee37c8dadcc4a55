// formats::read_npy on arbitrary bytes (seeds: the .npy files of tests/data).
#include "fuzz_input.h"
#include "tts/formats/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string path = tts::fuzz::write_input(data, size, ".npy");
  tts::fuzz::expect_success_or_error([&] { tts::formats::read_npy(path); });
  return 0;
}
