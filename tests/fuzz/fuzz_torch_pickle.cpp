// The pickle interpreter behind a valid zip: the input is data.pkl of an archive that also holds
// one 16-float storage "0" (and "1" of 4 bytes), so mutations reach the opcodes instead of dying in
// the zip reader (seeds: data.pkl of the torch.save files of tests/data).
#include "../support/pickle_zip.h"
#include "fuzz_input.h"
#include "tts/formats/torch_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string storage(16 * sizeof(float), '\x01');
  std::string zip = tts::test::torch_zip(std::string(reinterpret_cast<const char*>(data), size),
                                         {{"0", storage}, {"1", std::string(4, '\x02')}});
  std::string path =
      tts::fuzz::write_input(reinterpret_cast<const uint8_t*>(zip.data()), zip.size(), ".pt");
  tts::fuzz::expect_success_or_error([&] { tts::formats::read_torch_file(path); });
  return 0;
}
