// formats::read_torch_file on arbitrary bytes: the zip container and everything behind it (seeds:
// the torch.save files of tests/data).
#include "fuzz_input.h"
#include "tts/formats/torch_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string path = tts::fuzz::write_input(data, size, ".pt");
  tts::fuzz::expect_success_or_error([&] { tts::formats::read_torch_file(path); });
  return 0;
}
