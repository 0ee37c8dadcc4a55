// parse_json, the bounded reader of the peers' settings files, on arbitrary text (seeds: the
// config.json and hparams.json files of tests/data/vocoders).
#include "fuzz_input.h"
#include "tts/formats/json_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  tts::fuzz::expect_success_or_error([&] { tts::formats::parse_json(text, "fuzz.json"); });
  return 0;
}
