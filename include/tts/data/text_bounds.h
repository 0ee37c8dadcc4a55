// Bounds on a transcript (config/data_options.h: kMaxSymbolsPerUtterance, kMaxSymbolsPerSecond):
// preprocess skips an utterance past them, naming it in errors.tsv, and the loader leaves out one
// that a store holds anyway, so that nothing in training is sized by an unbounded transcript.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tts::data {

// The symbols a transcript of `seconds` of audio may have.
int64_t max_symbols(double seconds);

// Why `symbols` symbols are too many for `seconds` of audio ("too much text: ..."; the words
// before the colon are the skip's category), or nothing when they fit. `seconds` < 0: unknown
// yet, only the ceiling per utterance is checked.
std::optional<std::string> text_bound_problem(int64_t symbols, double seconds);

}  // namespace tts::data
