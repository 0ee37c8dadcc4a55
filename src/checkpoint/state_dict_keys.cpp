#include "tts/checkpoint/state_dict_keys.h"

#include <algorithm>

#include "tts/core/error.h"

namespace tts::checkpoint {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_char(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

// The layer index written by the digits of `name` from `begin` to `end`.
int64_t layer_index(const std::string& name, size_t begin, size_t end, const std::string& file) {
  int64_t index = 0;
  for (size_t i = begin; i < end; ++i) {
    index = index * 10 + (name[i] - '0');
    TTS_CHECK(index <= kMaxLayerIndex,
              "'{}': the state dict names layer '{}' with an index past {}; the networks it could "
              "hold have a few dozen layers at most, so the file is damaged or of another kind",
              file, name.substr(0, 120), kMaxLayerIndex);
  }
  return index;
}

}  // namespace

void check_state_dict_key(const std::string& key, const std::string& file) {
  TTS_CHECK(key.size() <= kMaxStateDictKeyBytes,
            "'{}': the state dict has a key of {} bytes ('{}...'); parameter names are under {} "
            "bytes, so the file is damaged or was not written by the framework it claims",
            file, key.size(), key.substr(0, 60), kMaxStateDictKeyBytes);
  for (size_t begin = 0; begin <= key.size();) {
    const size_t end = std::min(key.find('.', begin), key.size());
    const bool word =
        end > begin && std::all_of(key.begin() + begin, key.begin() + end, is_name_char);
    TTS_CHECK(word,
              "'{}': the state dict has a key '{}' that is no parameter name (dot-separated "
              "words of letters, digits and _)",
              file, key);
    if (std::all_of(key.begin() + begin, key.begin() + end, is_digit)) {
      layer_index(key, begin, end, file);
    }
    begin = end + 1;
  }
}

int64_t layer_count(const std::vector<std::string>& names, const std::string& prefix,
                    const std::string& file) {
  int64_t count = 0;
  for (const auto& name : names) {
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    size_t end = prefix.size();
    while (end < name.size() && is_digit(name[end])) ++end;
    if (end == prefix.size() || end == name.size() || name[end] != '.') continue;
    count = std::max(count, layer_index(name, prefix.size(), end, file) + 1);
  }
  return count;
}

}  // namespace tts::checkpoint
