// Text -> IPA phonemes with libespeak-ng (no Python): what `text.frontend: phonemes` reads.
// espeak-ng keeps one global state (voice, buffers), so every call holds one process-wide lock;
// preprocess's worker threads share it (docs/benchmarks.md measures what it costs). The engine
// runs in a child process of ours (Note [espeak-ng crashes], src/text/phonemizer.cpp): a fault
// inside the library costs one text, which ends in a tts::Error naming it.
#pragma once

#include <string>
#include <vector>

namespace tts::text {

class Phonemizer {
 public:
  // Throws UsageError when espeak-ng has no voice `language` (naming `espeak-ng --voices`), and
  // tts::Error when its data cannot be found.
  explicit Phonemizer(const std::string& language);

  // espeak-ng's IPA of each clause of `text`, as `espeak-ng -q --ipa -v LANGUAGE` prints them
  // (one line each): stress marks, words separated by spaces.
  std::vector<std::string> clauses(const std::string& text) const;

  // What the model reads: the clauses' IPA, each followed by the punctuation that ended it in
  // the text (, . ; : ! ? and -), joined by spaces; espeak-ng's language-switch marks ("(en)")
  // removed. Throws tts::Error naming the text when no phoneme is left (a script the voice
  // cannot read, or nothing but punctuation), and when espeak-ng crashes on it.
  std::string phonemize(const std::string& text) const;

  const std::string& language() const { return language_; }

  // "espeak-ng 1.51": the library's version, which a store of phonemes records.
  static std::string version();

 private:
  std::string language_;
};

}  // namespace tts::text
