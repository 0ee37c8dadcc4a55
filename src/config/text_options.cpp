#include "tts/config/text_options.h"

#include <cctype>
#include <string>

namespace tts::config {

void TextOptions::validate() const {
  require(!cleaners.empty(), "text.cleaners", "[]",
          "must name at least one cleaner, e.g. [english_cleaners] or [basic_cleaners]");
  const bool phonemes = frontend == Frontend::kPhonemes;
  require(phonemes == (symbol_set == SymbolSet::kIpa), "text.symbol_set",
          std::string(choice_name(symbol_set)),
          phonemes ? "frontend: phonemes reads espeak-ng's IPA: set symbol_set: ipa"
                   : "symbol_set: ipa holds IPA phonemes: set frontend: phonemes, or pick a "
                     "character set (english, english_arpabet, nvidia)");
  // A voice name: letters, digits and - + _ (espeak-ng's names: en-us, de, zh-yue, en+f3).
  bool valid_name = !language.empty() && language.size() <= 40;
  for (char c : language) {
    valid_name = valid_name &&
                 (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '+' || c == '_');
  }
  require(valid_name, "text.language", language,
          "must be an espeak-ng voice name (letters, digits, '-', '+', '_'; at most 40), e.g. "
          "en-us or de");
  // The English cleaners spell numbers and abbreviations in English and transliterate to ASCII:
  // text of another language is left to espeak-ng's own reading.
  if (phonemes && language.rfind("en", 0) != 0) {
    for (Cleaner cleaner : cleaners) {
      require(cleaner == Cleaner::kBasic, "text.cleaners", std::string(choice_name(cleaner)),
              "reads text as English (numbers, abbreviations, ASCII): with language " + language +
                  " use [basic_cleaners], and espeak-ng reads numbers and abbreviations");
    }
  }
}

}  // namespace tts::config
