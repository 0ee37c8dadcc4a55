// Symbol sets: the alphabet a model is built for. Ids index into the table; id 0 is padding and
// id 1 the end-of-sentence mark, in every set. `english` is keithito/Rayhane's character set
// (letters, punctuation, space); `english_arpabet` adds the 84 ARPAbet phonemes of CMUdict, each
// one symbol, written "@AH0" in the table and "{HH AH0 L OW1}" in text.
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

// Number of symbols in `symbol_set` (the model's embedding size). Throws like symbol_table().
int64_t symbol_count(const std::string& symbol_set);

}  // namespace tts::text
