#include "tts/text/text_processor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <mutex>
#include <unordered_map>

#include "tts/core/error.h"
#include "tts/core/logging.h"
#include "tts/text/cleaners.h"
#include "tts/text/phonemizer.h"

namespace tts::text {
namespace {

using Cleaner = std::string (*)(const std::string&);

Cleaner find_cleaner(config::Cleaner name) {
  switch (name) {
    case config::Cleaner::kBasic:
      return basic_cleaners;
    case config::Cleaner::kTransliteration:
      return transliteration_cleaners;
    case config::Cleaner::kEnglish:
      return english_cleaners;
    case config::Cleaner::kEnglishCorrected:
      return english_cleaners_corrected;
  }
  throw Error(fmt::format("text.cleaners: no function for the cleaner {}", name));
}

// Byte length of the UTF-8 sequence that starts with `lead` (1 for a stray byte).
size_t sequence_length(unsigned char lead) {
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  if ((lead >> 3) == 0x1E) return 4;
  return 1;
}

// "'é' (U+00E9)" for a UTF-8 character; bytes that are not valid UTF-8 are shown in hex.
std::string describe_character(const std::string& character) {
  auto lead = static_cast<unsigned char>(character[0]);
  if (lead < 0x80 && character.size() > 1) return fmt::format("'{}'", character);  // a phoneme
  if (character.size() == 1 && lead < 0x80) {
    return lead < 0x20 || lead == 0x7F ? fmt::format("U+{:04X}", lead)
                                       : fmt::format("'{}' (U+{:04X})", character, lead);
  }
  if (character.size() == 1) return fmt::format("byte 0x{:02X} (not UTF-8)", lead);
  char32_t code = lead & (0x3F >> (character.size() - 1));
  for (size_t k = 1; k < character.size(); ++k) {
    code = (code << 6) | (static_cast<unsigned char>(character[k]) & 0x3F);
  }
  return fmt::format("'{}' (U+{:04X})", character, static_cast<uint32_t>(code));
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// `text` for a message: control characters and quotes escaped (\t, \n, \", \xNN).
std::string escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20 || byte == 0x7F) {
      out += fmt::format("\\x{:02x}", byte);
    } else {
      out += c;
    }
  }
  return out;
}

// Each distinct character of `text` described, with its count: "U+0020 x3, U+0009".
std::string describe_characters(const std::string& text) {
  std::vector<std::pair<std::string, int>> counts;
  for (size_t i = 0; i < text.size();) {
    const size_t length =
        std::min(sequence_length(static_cast<unsigned char>(text[i])), text.size() - i);
    const std::string character = text.substr(i, length);
    i += length;
    auto found = std::find_if(counts.begin(), counts.end(),
                              [&](const auto& seen) { return seen.first == character; });
    if (found != counts.end()) {
      ++found->second;
    } else {
      counts.emplace_back(character, 1);
    }
  }
  std::vector<std::string> parts;
  for (const auto& [character, count] : counts) {
    parts.push_back(count == 1 ? describe_character(character)
                               : fmt::format("{} x{}", describe_character(character), count));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

struct TextProcessor::State {
  config::TextOptions options;
  std::vector<Cleaner> cleaners;
  const std::vector<std::string>* symbols = nullptr;
  std::array<int64_t, 128> ascii_ids{};                  // -1: not in the set
  std::unordered_map<std::string, int64_t> phoneme_ids;  // "AH0" -> id
  std::unordered_map<std::string, int64_t> utf8_ids;     // one non-ASCII code point -> id
  std::unique_ptr<Phonemizer> phonemizer;                // frontend: phonemes
  bool arpabet = false;
  int64_t eos_id = -1;  // -1: the set has none (nvidia)

  mutable std::mutex mutex;
  mutable std::map<std::string, int64_t> dropped;

  std::string run_cleaners(const std::string& text) const {
    std::string cleaned = text;
    for (Cleaner cleaner : cleaners) cleaned = cleaner(cleaned);
    return cleaned;
  }

  void unknown(const std::string& character, const std::string& text) const {
    if (options.unknown == config::UnknownCharacters::kError) {
      throw Error(
          fmt::format("text: {} in \"{}\" is not in symbol set '{}'; map it with a cleaner (e.g. "
                      "transliteration_cleaners), fix the transcript, or set text.unknown: drop",
                      describe_character(character), text, options.symbol_set));
    }
    std::lock_guard<std::mutex> lock(mutex);
    if (dropped[character]++ == 0) {
      log::get("text")->warn(
          "dropping {} (not in symbol set '{}'), first seen in \"{}\"; further occurrences are "
          "counted and reported at the end",
          describe_character(character), options.symbol_set, text);
    }
  }
};

TextProcessor::TextProcessor(const config::TextOptions& options)
    : state_(std::make_unique<State>()) {
  state_->options = options;
  TTS_USAGE_CHECK(!options.cleaners.empty(),
                  "config: text.cleaners = []: name at least one cleaner, e.g. [english_cleaners]");
  for (const auto& name : options.cleaners) state_->cleaners.push_back(find_cleaner(name));
  state_->symbols = &symbol_table(options.symbol_set);
  if (options.frontend == config::Frontend::kPhonemes) {
    state_->phonemizer = std::make_unique<Phonemizer>(options.language);
  }
  state_->eos_id = has_eos(options.symbol_set) ? 1 : -1;
  state_->ascii_ids.fill(-1);
  // Padding and the end-of-sentence mark never come from text.
  for (size_t id = state_->eos_id >= 0 ? 2 : 1; id < state_->symbols->size(); ++id) {
    const std::string& symbol = (*state_->symbols)[id];
    if (symbol.size() == 1) {
      state_->ascii_ids[static_cast<unsigned char>(symbol[0])] = static_cast<int64_t>(id);
    } else if (symbol[0] != '@') {
      state_->utf8_ids[symbol] = static_cast<int64_t>(id);
    } else {
      state_->phoneme_ids[symbol.substr(1)] = static_cast<int64_t>(id);
      state_->arpabet = true;
    }
  }
}

TextProcessor::~TextProcessor() = default;

std::string TextProcessor::clean(const std::string& raw) const {
  if (state_->phonemizer) return state_->phonemizer->phonemize(state_->run_cleaners(raw));
  if (!state_->arpabet) return state_->run_cleaners(raw);
  // Text outside "{...}" is cleaned; phoneme groups keep their spelling, uppercased.
  std::string out;
  size_t i = 0;
  while (i < raw.size()) {
    size_t open = raw.find('{', i);
    size_t close = open == std::string::npos ? std::string::npos : raw.find('}', open);
    if (close == std::string::npos) open = close = raw.size();
    std::string segment = raw.substr(i, open - i);
    std::string cleaned = state_->run_cleaners(segment);
    // The space between text and a phoneme group, unless the cleaners kept it (NVIDIA's
    // english_cleaners does not trim).
    if (!cleaned.empty() && !out.empty() && is_space(segment.front()) && cleaned.front() != ' ') {
      out += ' ';
    }
    out += cleaned;
    if (!cleaned.empty() && open < raw.size() && is_space(segment.back()) &&
        cleaned.back() != ' ') {
      out += ' ';
    }
    if (open >= raw.size()) break;
    std::string phonemes;
    for (size_t k = open + 1; k < close; ++k) {
      char c = raw[k];
      if (is_space(c)) {
        if (!phonemes.empty() && phonemes.back() != ' ') phonemes += ' ';
      } else {
        phonemes += (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
      }
    }
    if (!phonemes.empty() && phonemes.back() == ' ') phonemes.pop_back();
    out += "{" + phonemes + "}";
    i = close + 1;
  }
  return out;
}

std::vector<int64_t> TextProcessor::to_ids(const std::string& cleaned) const {
  return lookup(cleaned, nullptr);
}

std::vector<int64_t> TextProcessor::lookup(const std::string& cleaned,
                                           std::vector<std::string>* dropped) const {
  auto drop = [&](const std::string& character) {
    state_->unknown(character, cleaned);
    if (dropped != nullptr) dropped->push_back(character);
  };
  std::vector<int64_t> ids;
  ids.reserve(cleaned.size() + 1);
  size_t i = 0;
  while (i < cleaned.size()) {
    auto lead = static_cast<unsigned char>(cleaned[i]);
    if (state_->arpabet && lead == '{') {
      size_t close = cleaned.find('}', i);
      if (close != std::string::npos) {
        size_t k = i + 1;
        while (k < close) {
          size_t end = cleaned.find(' ', k);
          if (end == std::string::npos || end > close) end = close;
          if (end > k) {
            std::string phoneme = cleaned.substr(k, end - k);
            auto found = state_->phoneme_ids.find(phoneme);
            if (found != state_->phoneme_ids.end()) {
              ids.push_back(found->second);
            } else {
              drop("{" + phoneme + "}");
            }
          }
          k = end + 1;
        }
        i = close + 1;
        continue;
      }
    }
    if (lead < 0x80 && state_->ascii_ids[lead] >= 0) {
      ids.push_back(state_->ascii_ids[lead]);
      ++i;
      continue;
    }
    size_t length = std::min(sequence_length(lead), cleaned.size() - i);
    if (lead >= 0x80) {
      auto found = state_->utf8_ids.find(cleaned.substr(i, length));
      if (found != state_->utf8_ids.end()) {
        ids.push_back(found->second);
        i += length;
        continue;
      }
    }
    drop(cleaned.substr(i, length));
    i += length;
  }
  if (eos_id() >= 0) ids.push_back(eos_id());
  return ids;
}

std::vector<int64_t> TextProcessor::speakable_ids(const std::string& raw, const std::string& what,
                                                  std::string* cleaned) const {
  auto blank = [](const std::string& text) {
    return std::all_of(text.begin(), text.end(), [](char c) { return is_space(c); });
  };
  TTS_USAGE_CHECK(!blank(raw), "{} is only whitespace ({}): give the words to speak", what,
                  describe_characters(raw));
  *cleaned = clean(raw);
  std::vector<std::string> dropped;
  std::vector<int64_t> ids = lookup(*cleaned, &dropped);
  std::vector<int64_t> spoken;
  for (int64_t id : ids) {
    if (id != pad_id() && id != eos_id()) spoken.push_back(id);
  }
  if (!blank(to_text(spoken))) return ids;
  TTS_USAGE_CHECK(!dropped.empty(),
                  "{} (\"{}\") leaves nothing to speak once cleaned by text.cleaners [{}]: give "
                  "words the cleaners keep",
                  what, escaped(raw), fmt::join(state_->options.cleaners, ", "));
  std::vector<std::string> names;
  for (const std::string& character : dropped) {
    const std::string name = describe_character(character);
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  throw UsageError(fmt::format(
      "{} (\"{}\") says nothing in symbol set '{}': every character but whitespace is dropped "
      "({}); write it in the model's characters, or map them with a cleaner (e.g. "
      "transliteration_cleaners)",
      what, escaped(raw), state_->options.symbol_set, fmt::join(names, ", ")));
}

std::string TextProcessor::to_text(const std::vector<int64_t>& ids) const {
  const auto& symbols = *state_->symbols;
  std::string text;
  bool in_phonemes = false;
  for (int64_t id : ids) {
    TTS_CHECK(id >= 0 && id < num_symbols(),
              "text: id {} is outside symbol set '{}' (valid ids: 0 to {}); was the model built "
              "for another symbol set?",
              id, state_->options.symbol_set, num_symbols() - 1);
    if (id == pad_id() || id == eos_id()) continue;
    const std::string& symbol = symbols[static_cast<size_t>(id)];
    bool phoneme = symbol.size() > 1 && symbol[0] == '@';  // ARPAbet
    if (phoneme) {
      text += in_phonemes ? " " : "{";
      text += symbol.substr(1);
    } else {
      if (in_phonemes) text += '}';
      text += symbol;
    }
    in_phonemes = phoneme;
  }
  if (in_phonemes) text += '}';
  return text;
}

int64_t TextProcessor::eos_id() const { return state_->eos_id; }

int64_t TextProcessor::num_symbols() const { return static_cast<int64_t>(state_->symbols->size()); }

std::map<std::string, int64_t> TextProcessor::dropped_characters() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->dropped;
}

void TextProcessor::report() const {
  std::map<std::string, int64_t> dropped = dropped_characters();
  if (dropped.empty()) return;
  std::vector<std::string> parts;
  for (const auto& [character, count] : dropped) {
    parts.push_back(fmt::format("{} x{}", describe_character(character), count));
  }
  log::get("text")->warn("dropped characters not in symbol set '{}': {}",
                         state_->options.symbol_set, fmt::join(parts, ", "));
}

}  // namespace tts::text
