#include "tts/checkpoint/nvidia_keys.h"

#include <algorithm>

#include "tts/core/error.h"

namespace tts::checkpoint {

void check_state_dict_key(const std::string& key, const std::string& file) {
  TTS_CHECK(key.size() <= kMaxStateDictKeyBytes,
            "'{}': the state dict has a key of {} bytes ('{}...'); parameter names are under {} "
            "bytes, so the file is damaged or was not written by NVIDIA/tacotron2",
            file, key.size(), key.substr(0, 60), kMaxStateDictKeyBytes);
}

int64_t layer_count(const std::vector<std::string>& names, const std::string& prefix,
                    const std::string& file) {
  int64_t count = 0;
  for (const auto& name : names) {
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    size_t end = prefix.size();
    int64_t index = 0;
    while (end < name.size() && name[end] >= '0' && name[end] <= '9') {
      index = index * 10 + (name[end] - '0');
      TTS_CHECK(index <= kMaxLayerIndex,
                "'{}': the state dict names layer '{}' with an index past {}; NVIDIA's model has a "
                "handful of layers, so the file is damaged or not NVIDIA/tacotron2's",
                file, name.substr(0, 120), kMaxLayerIndex);
      ++end;
    }
    if (end == prefix.size() || end == name.size() || name[end] != '.') continue;
    count = std::max(count, index + 1);
  }
  return count;
}

}  // namespace tts::checkpoint
