#include "tts/text/symbols.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <initializer_list>

#include "tts/core/error.h"
#include "tts/core/printable.h"

namespace tts::text {
namespace {

constexpr char kPunctuation[] = "!'\"(),-.:;? ";
constexpr char kLetters[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

// CMUdict's phoneme set (keithito/tacotron text/cmudict.py).
const char* const kArpabet[] = {
    "AA",  "AA0", "AA1", "AA2", "AE",  "AE0", "AE1", "AE2", "AH",  "AH0", "AH1", "AH2", "AO", "AO0",
    "AO1", "AO2", "AW",  "AW0", "AW1", "AW2", "AY",  "AY0", "AY1", "AY2", "B",   "CH",  "D",  "DH",
    "EH",  "EH0", "EH1", "EH2", "ER",  "ER0", "ER1", "ER2", "EY",  "EY0", "EY1", "EY2", "F",  "G",
    "HH",  "IH",  "IH0", "IH1", "IH2", "IY",  "IY0", "IY1", "IY2", "JH",  "K",   "L",   "M",  "N",
    "NG",  "OW",  "OW0", "OW1", "OW2", "OY",  "OY0", "OY1", "OY2", "P",   "R",   "S",   "SH", "T",
    "TH",  "UH",  "UH0", "UH1", "UH2", "UW",  "UW0", "UW1", "UW2", "V",   "W",   "Y",   "Z",  "ZH"};

// NVIDIA/tacotron2's text/symbols.py: no end-of-sentence mark, '-' second, its own punctuation.
constexpr char kNvidiaSpecial[] = "-";
constexpr char kNvidiaPunctuation[] = "!'(),.:;? ";

std::vector<std::string> make_table(std::vector<std::string> table,
                                    std::initializer_list<const char*> character_groups,
                                    bool with_arpabet) {
  for (const char* group : character_groups) {
    for (const char* c = group; *c; ++c) table.emplace_back(1, *c);
  }
  if (with_arpabet) {
    for (const char* phoneme : kArpabet) table.push_back(std::string("@") + phoneme);
  }
  return table;
}

// IPA as espeak-ng writes it, one symbol per code point (a combining mark or modifier is its own
// symbol): the ASCII letters the IPA uses, then the IPA letters, then suprasegmentals and
// diacritics. One fixed inventory for every language, so that a warm start from one language
// to another keeps every phoneme both read (checkpoint/warm_start.h).
constexpr char kIpaAscii[] = "abcdefghijklmnopqrstuvwxyz";
const char* const kIpaLetters[] = {
    "æ", "ɐ", "ɑ", "ɒ", "ɓ", "ʙ", "β", "ɔ", "ɕ", "ç", "ɗ", "ɖ", "ð", "ə", "ɘ", "ɚ", "ɛ", "ɜ",
    "ɝ", "ɞ", "ɟ", "ʄ", "ɡ", "ɠ", "ɢ", "ʛ", "ɦ", "ɧ", "ħ", "ɥ", "ʜ", "ɨ", "ɪ", "ʝ", "ɭ", "ɬ",
    "ɫ", "ɮ", "ʟ", "ɱ", "ɯ", "ɰ", "ŋ", "ɳ", "ɲ", "ɴ", "ø", "ɵ", "ɸ", "θ", "œ", "ɶ", "ʘ", "ɹ",
    "ɺ", "ɾ", "ɻ", "ʀ", "ʁ", "ɽ", "ʂ", "ʃ", "ʈ", "ʉ", "ʊ", "ʋ", "ⱱ", "ʌ", "ɣ", "ɤ", "ʍ", "χ",
    "ʎ", "ʏ", "ʑ", "ʐ", "ʒ", "ʔ", "ʡ", "ʕ", "ʢ", "ǀ", "ǁ", "ǂ", "ǃ", "ᵻ", "ᵿ"};
const char* const kIpaMarks[] = {"ˈ",      "ˌ",      "ː",      "ˑ",      "ʰ",      "ʲ",
                                 "ʷ",      "ˠ",      "ˤ",      "ⁿ",      "ˡ",      "˞",
                                 "\u0303", "\u0329", "\u032F", "\u031E", "\u031D", "\u0361",
                                 "\u032A", "\u0325", "\u0306", "\u0330", "\u0324", "˥",
                                 "˦",      "˧",      "˨",      "˩"};

std::vector<std::string> make_ipa_table() {
  std::vector<std::string> table =
      make_table({kPadSymbol, kEosSymbol}, {kPunctuation, kIpaAscii}, false);
  for (const char* symbol : kIpaLetters) table.emplace_back(symbol);
  for (const char* symbol : kIpaMarks) table.emplace_back(symbol);
  return table;
}

}  // namespace

const std::vector<std::string>& symbol_table(SymbolSet symbol_set) {
  static const std::vector<std::string> english =
      make_table({kPadSymbol, kEosSymbol}, {kPunctuation, kLetters}, false);
  static const std::vector<std::string> english_arpabet =
      make_table({kPadSymbol, kEosSymbol}, {kPunctuation, kLetters}, true);
  static const std::vector<std::string> nvidia =
      make_table({kPadSymbol}, {kNvidiaSpecial, kNvidiaPunctuation, kLetters}, true);
  static const std::vector<std::string> ipa = make_ipa_table();
  switch (symbol_set) {
    case SymbolSet::kIpa:
      return ipa;
    case SymbolSet::kEnglish:
      return english;
    case SymbolSet::kEnglishArpabet:
      return english_arpabet;
    case SymbolSet::kNvidia:
      return nvidia;
  }
  throw Error(fmt::format("text.symbol_set: no table for value {}", static_cast<int>(symbol_set)));
}

bool has_eos(SymbolSet symbol_set) {
  const std::vector<std::string>& table = symbol_table(symbol_set);
  return table.size() > 1 && table[1] == kEosSymbol;
}

int64_t symbol_count(SymbolSet symbol_set) {
  return static_cast<int64_t>(symbol_table(symbol_set).size());
}

std::string table_difference(const std::vector<std::string>& a, const std::string& a_name,
                             const std::vector<std::string>& b, const std::string& b_name) {
  const size_t common = std::min(a.size(), b.size());
  for (size_t i = 0; i < common; ++i) {
    if (a[i] != b[i]) {
      return fmt::format("id {} is '{}' in {} and '{}' in {}", i, printable(a[i]), a_name,
                         printable(b[i]), b_name);
    }
  }
  if (a.size() == b.size()) return "";
  return fmt::format("{} has {} symbols, {} {} (the first {} agree)", a_name, a.size(), b_name,
                     b.size(), common);
}

}  // namespace tts::text
