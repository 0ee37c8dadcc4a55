// Character error rate of a transcript against the text it should say (docs/evaluate.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tts::eval {

// The text compared: ASCII letters lowercased; punctuation removed (ASCII punctuation and the
// common Unicode marks: quotes ‘ ’ “ ” « », dashes – —, the ellipsis …, ¡ ¿); every run of white
// space (ASCII space, tab, newline, CR, FF, VT) made one space, none at either end. Other
// characters (digits, non-ASCII letters) are kept as they are. Returns Unicode code points;
// each byte of invalid UTF-8 is kept as a character of its own.
std::vector<char32_t> normalize_for_cer(std::string_view text);

// The Levenshtein distance (insertions, deletions, substitutions, each 1) between two sequences.
int64_t levenshtein(const std::vector<char32_t>& a, const std::vector<char32_t>& b);

struct CerResult {
  int64_t edits = 0;
  int64_t reference_chars = 0;  // of the normalized text
  double cer = 0.0;             // edits / reference_chars
};

// CER of `hypothesis` (what the ASR heard) against `reference` (the text), both normalized.
// Throws tts::Error when the normalized reference is empty (`what` names it): the rate would
// divide by zero.
CerResult character_error_rate(std::string_view reference, std::string_view hypothesis,
                               const std::string& what = "text");

}  // namespace tts::eval
