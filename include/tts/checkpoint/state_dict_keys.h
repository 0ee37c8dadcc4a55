// The names in another framework's state dict (NVIDIA's, jik876's, r9y9's files), read by hand (no
// std::regex: libstdc++'s matcher recurses once per character, so a megabyte-long key from a file
// would overflow the stack).
// Torch-free, so that its fuzz harness builds from this file alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tts::checkpoint {

// The longest real names (NVIDIA's "module.decoder.attention_layer.location_layer.location_dense.
// linear_layer.weight") have about 80 bytes; a key past this many is no parameter name.
inline constexpr size_t kMaxStateDictKeyBytes = 1024;
// The deepest real stacks (r9y9's WaveNet) have 30 layers; a layer index past this is no layer.
inline constexpr int64_t kMaxLayerIndex = 9999;

// Throws tts::Error naming `file` unless `key` is a parameter name: at most kMaxStateDictKeyBytes,
// dot-separated words of letters, digits and _, any all-digit word at most kMaxLayerIndex.
void check_state_dict_key(const std::string& key, const std::string& file);

// The highest layer index + 1 among the names "<prefix><index>.<rest>" of `names` (0 when none
// has that form), for the layer-count hints: "encoder.convolutions." over NVIDIA's names
// "encoder.convolutions.2.0.conv.weight" gives 3. Throws tts::Error naming `file` for an index
// past kMaxLayerIndex.
int64_t layer_count(const std::vector<std::string>& names, const std::string& prefix,
                    const std::string& file);

}  // namespace tts::checkpoint
