// parse_config on arbitrary YAML text (seeds: configs/*.yaml). Its refusals are UsageErrors.
#include "fuzz_input.h"
#include "tts/config/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  tts::fuzz::expect_success_or_error([&] { tts::config::parse_config(text, "fuzz.yaml"); });
  return 0;
}
