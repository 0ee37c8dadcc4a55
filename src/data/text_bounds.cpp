#include "tts/data/text_bounds.h"

#include <fmt/format.h>

#include <algorithm>

#include "tts/config/data_options.h"

namespace tts::data {

int64_t max_symbols(double seconds) {
  const double allowed = config::kSymbolAllowance + config::kMaxSymbolsPerSecond * seconds;
  return std::min<int64_t>(config::kMaxSymbolsPerUtterance, static_cast<int64_t>(allowed));
}

std::optional<std::string> text_bound_problem(int64_t symbols, double seconds) {
  if (symbols > config::kMaxSymbolsPerUtterance) {
    return fmt::format(
        "too much text: {} symbols, more than the {} an utterance may have (over ten minutes of "
        "speech); split the utterance",
        symbols, config::kMaxSymbolsPerUtterance);
  }
  if (seconds < 0 || symbols <= max_symbols(seconds)) return std::nullopt;
  return fmt::format(
      "too much text: {} symbols for {:.2f} s of audio, more than {} ({} a second, speech has 10 "
      "to 25); the transcript does not belong to the clip",
      symbols, seconds, max_symbols(seconds), config::kMaxSymbolsPerSecond);
}

}  // namespace tts::data
