// Symbol sets: the alphabet a model is built for. Ids index into the table; id 0 is padding in
// every set, id 1 the end-of-sentence mark in ours. `english` is keithito/Rayhane's character set
// (letters, punctuation, space); `english_arpabet` adds the 84 ARPAbet phonemes of CMUdict, each
// one symbol, written "@AH0" in the table and "{HH AH0 L OW1}" in text. `nvidia` is
// NVIDIA/tacotron2's 148 symbols in its order (pad, '-', !'(),.:;? and space, letters, ARPAbet),
// without an end-of-sentence mark, so that ids and embeddings match its checkpoints.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tts::text {

inline constexpr char kPadSymbol[] = "_";
inline constexpr char kEosSymbol[] = "~";

// Names accepted by symbol_table() and config key text.symbol_set.
std::vector<std::string> symbol_set_names();

// The symbols of `symbol_set`, in id order. Throws UsageError naming the valid sets when unknown.
const std::vector<std::string>& symbol_table(const std::string& symbol_set);

// Whether `symbol_set` has the end-of-sentence mark (id 1) that text ids end with; NVIDIA's has
// none. Throws like symbol_table().
bool has_eos(const std::string& symbol_set);

// Number of symbols in `symbol_set` (the model's embedding size). Throws like symbol_table().
int64_t symbol_count(const std::string& symbol_set);

}  // namespace tts::text
