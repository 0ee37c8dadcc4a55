// Config section `text`: the text front end (cleaners, symbol set).
#pragma once

#include <string>
#include <vector>

#include "tts/config/field.h"

namespace tts::config {

enum class SymbolSet { kEnglish, kEnglishArpabet, kNvidia, kIpa };
TTS_CHOICE_NAMES(SymbolSet, {SymbolSet::kEnglish, "english"},
                 {SymbolSet::kEnglishArpabet, "english_arpabet"}, {SymbolSet::kNvidia, "nvidia"},
                 {SymbolSet::kIpa, "ipa"});
// What the model reads: the cleaned characters, or espeak-ng's IPA phonemes of them.
enum class Frontend { kCharacters, kPhonemes };
TTS_CHOICE_NAMES(Frontend, {Frontend::kCharacters, "characters"},
                 {Frontend::kPhonemes, "phonemes"});
// What happens to characters outside the symbol set.
enum class UnknownCharacters { kDrop, kError };
TTS_CHOICE_NAMES(UnknownCharacters, {UnknownCharacters::kDrop, "drop"},
                 {UnknownCharacters::kError, "error"});

// The text cleaners (text/cleaners.h), chained in the order the config lists them.
enum class Cleaner { kBasic, kTransliteration, kEnglish, kEnglishCorrected };
TTS_CHOICE_NAMES(Cleaner, {Cleaner::kBasic, "basic_cleaners"},
                 {Cleaner::kTransliteration, "transliteration_cleaners"},
                 {Cleaner::kEnglish, "english_cleaners"},
                 {Cleaner::kEnglishCorrected, "english_cleaners_corrected"});

struct TextOptions {
  // Each field's meaning is documented once, in visit(); dumped configs carry it as a comment.
  std::vector<Cleaner> cleaners{Cleaner::kEnglish};
  Frontend frontend = Frontend::kCharacters;
  std::string language = "en-us";
  SymbolSet symbol_set = SymbolSet::kEnglish;
  UnknownCharacters unknown = UnknownCharacters::kDrop;

  template <class V>
  void visit(V& v) {
    v("cleaners", cleaners,
      "cleaners applied in order (basic_cleaners, transliteration_cleaners, english_cleaners: "
      "NVIDIA/tacotron2's, english_cleaners_corrected: numbers read as LJSpeech's transcripts "
      "read them)");
    v("frontend", frontend,
      "what the model reads: characters (the cleaned text) or phonemes (espeak-ng's IPA of the "
      "cleaned text, made by preprocess and stored; needs symbol_set: ipa)");
    v("language", language,
      "with frontend: phonemes, the espeak-ng voice that reads the text (en-us, en-gb, de, es, "
      "...: espeak-ng --voices lists them)");
    v("symbol_set", symbol_set,
      "symbol table: english (letters, punctuation), english_arpabet (plus ARPAbet phonemes), "
      "nvidia (NVIDIA/tacotron2's 148 symbols) or ipa (punctuation and IPA phonemes, stress "
      "and length marks: every language espeak-ng reads)");
    v("unknown", unknown, "characters outside the symbol set: drop (warn once each) or error");
  }
  void validate() const;
};

}  // namespace tts::config
