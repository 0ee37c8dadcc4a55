#include "tts/text/phonemizer.h"

#include <espeak-ng/speak_lib.h>
#include <fmt/format.h>

#include <cstring>
#include <mutex>

#include "tts/core/error.h"

namespace tts::text {
namespace {

// espeak-ng's global state: one lock for every call, the voice it was last given.
std::mutex& engine_mutex() {
  static std::mutex mutex;
  return mutex;
}
std::string& current_voice() {
  static std::string voice;
  return voice;
}

// Starts the engine once per process (no audio: phonemes only). Call with the lock held.
void start_engine() {
  static bool started = false;
  if (started) return;
  const int rate =
      espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, nullptr, espeakINITIALIZE_DONT_EXIT);
  TTS_CHECK(rate > 0,
            "espeak-ng could not start (its voice data was not found): install espeak-ng-data, "
            "or set ESPEAK_DATA_PATH to the folder that holds espeak-ng-data");
  started = true;
}

// Selects `language`, throwing when espeak-ng has no such voice. Call with the lock held.
void select_voice(const std::string& language) {
  start_engine();
  if (current_voice() == language) return;
  TTS_USAGE_CHECK(espeak_SetVoiceByName(language.c_str()) == EE_OK,
                  "text.language {}: espeak-ng has no such voice; `espeak-ng --voices` lists "
                  "them (en-us, en-gb, de, es, fr, ...)",
                  language);
  current_voice() = language;
}

bool is_clause_punctuation(char c) { return c != 0 && std::strchr(",;:.!?", c) != nullptr; }

// A run of words and the punctuation that ends it ("" at the end of the text).
struct Piece {
  std::string words;
  std::string punctuation;
};

// `text` cut after every run of , ; : . ! ? that a space or the end follows, and at a dash
// between spaces: the marks the model sees as symbols, each after the words it closes.
std::vector<Piece> split_at_punctuation(const std::string& text) {
  std::vector<Piece> pieces(1);
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool spaced_dash =
        c == '-' && (i == 0 || text[i - 1] == ' ') && (i + 1 == text.size() || text[i + 1] == ' ');
    if (!is_clause_punctuation(c) && !spaced_dash) {
      pieces.back().words += c;
      continue;
    }
    size_t end = i;
    while (end < text.size() && (is_clause_punctuation(text[end]) || text[end] == '-')) ++end;
    if (end < text.size() && text[end] != ' ' && text[end] != '"' && text[end] != ')') {
      pieces.back().words += c;  // inside a word or a number: "3.5", "e.g"
      continue;
    }
    pieces.back().punctuation = text.substr(i, end - i);
    pieces.emplace_back();
    i = end - 1;
  }
  return pieces;
}

// `ipa` without espeak-ng's language-switch marks: "(en)", "(de)", "(pt-pt)".
std::string without_language_marks(const std::string& ipa) {
  std::string out;
  size_t i = 0;
  while (i < ipa.size()) {
    if (ipa[i] == '(') {
      size_t close = ipa.find(')', i);
      if (close != std::string::npos && close - i <= 12) {
        i = close + 1;
        continue;
      }
    }
    out += ipa[i++];
  }
  return out;
}

// espeak-ng's IPA of each clause of `text`.
std::vector<std::string> translate(const std::string& language, const std::string& text) {
  std::lock_guard<std::mutex> lock(engine_mutex());
  select_voice(language);
  std::vector<std::string> clauses;
  const void* position = text.c_str();
  while (position != nullptr) {
    const char* ipa = espeak_TextToPhonemes(&position, espeakCHARS_UTF8, 0x02);
    clauses.emplace_back(ipa != nullptr ? ipa : "");
  }
  return clauses;
}

}  // namespace

Phonemizer::Phonemizer(const std::string& language) : language_(language) {
  std::lock_guard<std::mutex> lock(engine_mutex());
  select_voice(language_);
}

std::vector<std::string> Phonemizer::clauses(const std::string& text) const {
  return translate(language_, text);
}

std::string Phonemizer::phonemize(const std::string& text) const {
  std::string out;
  bool any_phoneme = false;
  for (const Piece& piece : split_at_punctuation(text)) {
    std::string ipa;
    if (piece.words.find_first_not_of(" \"'()") != std::string::npos) {
      for (const std::string& clause : translate(language_, piece.words)) {
        const std::string bare = without_language_marks(clause);
        const size_t first = bare.find_first_not_of(' ');
        if (first == std::string::npos) continue;
        if (!ipa.empty()) ipa += ' ';
        ipa += bare.substr(first, bare.find_last_not_of(' ') - first + 1);
      }
    }
    any_phoneme = any_phoneme || !ipa.empty();
    if (ipa.empty()) {  // punctuation alone closes what came before
      out += piece.punctuation;
      continue;
    }
    if (!out.empty()) out += ' ';
    out += ipa + piece.punctuation;
  }
  TTS_CHECK(any_phoneme,
            "espeak-ng voice {} made no phonemes of \"{}\" (a script the voice cannot read, or "
            "no words)",
            language_, text);
  return out;
}

std::string Phonemizer::version() {
  std::lock_guard<std::mutex> lock(engine_mutex());
  start_engine();
  const char* data_path = nullptr;
  return fmt::format("espeak-ng {}", espeak_Info(&data_path));
}

}  // namespace tts::text
