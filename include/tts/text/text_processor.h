// Transcript -> symbol ids, as configured by the `text` section: the cleaner chain, then lookup in
// the symbol set. Thread-safe: clean() and to_ids() may be called concurrently (preprocess does);
// the count of dropped characters is shared.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tts/config/text_options.h"
#include "tts/text/symbols.h"  // symbol_count(), for building the model

namespace tts::text {

class TextProcessor {
 public:
  // Throws UsageError for an unknown cleaner or symbol set name (naming the valid ones).
  explicit TextProcessor(const config::TextOptions& options);
  ~TextProcessor();
  TextProcessor(const TextProcessor&) = delete;
  TextProcessor& operator=(const TextProcessor&) = delete;

  // Applies the cleaner chain. With a set that has ARPAbet, "{...}" phoneme groups pass through
  // uncleaned. With text.frontend: phonemes, returns espeak-ng's IPA of the cleaned text
  // (text/phonemizer.h): what a store holds and the model reads. Throws tts::Error when nothing
  // speakable is left.
  std::string clean(const std::string& raw) const;

  // Ids of the cleaned text, ending with eos_id() when the set has one. A character outside the
  // symbol set is dropped (one warning per distinct character, then counted; see
  // dropped_characters()) or, with text.unknown = error, throws tts::Error naming it.
  std::vector<int64_t> to_ids(const std::string& cleaned) const;

  // clean() then to_ids().
  std::vector<int64_t> encode(const std::string& raw) const { return to_ids(clean(raw)); }

  // clean() then to_ids() for text to speak (`what` names it: "sentence 2"), refusing text that
  // says nothing with a UsageError naming its characters (escaped): only whitespace, or no
  // character left but whitespace once the cleaners ran and the symbol set dropped what it lacks.
  // `cleaned` receives the cleaned text.
  std::vector<int64_t> speakable_ids(const std::string& raw, const std::string& what,
                                     std::string* cleaned) const;

  // Text of `ids` (padding and end-of-sentence omitted; ARPAbet symbols as "{HH AH0}").
  // Throws tts::Error for an id outside [0, num_symbols()).
  std::string to_text(const std::vector<int64_t>& ids) const;

  int64_t num_symbols() const;
  int64_t pad_id() const { return 0; }
  // 1, or -1 for a set without an end-of-sentence mark (nvidia: NVIDIA's ids end with the text).
  int64_t eos_id() const;

  // Characters dropped so far (UTF-8) and how often.
  std::map<std::string, int64_t> dropped_characters() const;
  // Logs one warning line listing the dropped characters with counts; nothing when none.
  void report() const;

 private:
  struct State;
  // to_ids(), adding each character dropped to `dropped` when given.
  std::vector<int64_t> lookup(const std::string& cleaned, std::vector<std::string>* dropped) const;
  std::unique_ptr<State> state_;
};

}  // namespace tts::text
