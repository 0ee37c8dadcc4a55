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

#include "tts/config/text_options.h"

namespace tts::text {

using config::SymbolSet;

inline constexpr char kPadSymbol[] = "_";
inline constexpr char kEosSymbol[] = "~";

// The symbols of `symbol_set`, in id order.
const std::vector<std::string>& symbol_table(SymbolSet symbol_set);

// Whether `symbol_set` has the end-of-sentence mark (id 1) that text ids end with; NVIDIA's has
// none.
bool has_eos(SymbolSet symbol_set);

// Number of symbols in `symbol_set` (the model's embedding size).
int64_t symbol_count(SymbolSet symbol_set);

// "" when `a` and `b` list the same symbols in the same order; otherwise the first difference,
// "id 37 is 'x' in A_NAME and 'y' in B_NAME" or "A_NAME has 66 symbols, B_NAME 150 (the first 66
// agree)", for an error message.
std::string table_difference(const std::vector<std::string>& a, const std::string& a_name,
                             const std::vector<std::string>& b, const std::string& b_name);

}  // namespace tts::text
