// jik876's config.json for hifigan_config_from_json: JSON read as JSON, each value handed to the
// config's rules, the generator's size checked against the budget (seeds: the config.json files
// of tests/data/vocoders).
#include "fuzz_input.h"
#include "tts/models/hifigan/conversion/jik876.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = tts::fuzz::write_input(data, size, ".json");
  tts::fuzz::expect_success_or_error([&] { tts::hifigan::hifigan_config_from_json(path, {}); });
  return 0;
}
