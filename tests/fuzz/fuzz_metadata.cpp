// parse_ljspeech_metadata on arbitrary text (seeds: LJSpeech-style metadata lines of tests/data).
#include "fuzz_input.h"
#include "tts/data/ljspeech.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  tts::fuzz::expect_success_or_error([&] { tts::data::parse_ljspeech_metadata(text); });
  return 0;
}
