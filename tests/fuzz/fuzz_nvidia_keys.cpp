// The NVIDIA state-dict key parser on arbitrary names, one per line (seeds: the names of NVIDIA's
// tiny checkpoint). Its refusals are tts::Errors naming the file.
#include <algorithm>
#include <string>
#include <vector>

#include "fuzz_input.h"
#include "tts/checkpoint/state_dict_keys.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> names;
  for (size_t start = 0; start <= text.size();) {
    size_t end = std::min(text.find('\n', start), text.size());
    names.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  tts::fuzz::expect_success_or_error([&] {
    for (const auto& name : names) tts::checkpoint::check_state_dict_key(name, "fuzz.pt");
    for (const char* prefix : {"encoder.convolutions.", "postnet.convolutions."}) {
      tts::checkpoint::layer_count(names, prefix, "fuzz.pt");
    }
  });
  return 0;
}
