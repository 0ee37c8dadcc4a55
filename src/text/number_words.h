// The English number words that both number readers use: english_cleaners_corrected's
// (cleaners.cpp) and inflect's, NVIDIA's (inflect_numbers.cpp). Private to the text module.
#pragma once

#include <array>

namespace tts::text::number_words {

// 0 to 19.
inline constexpr std::array<const char*, 20> kOnes = {
    "zero",     "one",     "two",     "three",     "four",     "five",    "six",
    "seven",    "eight",   "nine",    "ten",       "eleven",   "twelve",  "thirteen",
    "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"};
// 20, 30, ... 90 at their tens digit.
inline constexpr std::array<const char*, 10> kTens = {
    "", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"};
// 1000^k, up to inflect's last word.
inline constexpr std::array<const char*, 12> kScales = {
    "",           "thousand",   "million",   "billion",   "trillion", "quadrillion", "quintillion",
    "sextillion", "septillion", "octillion", "nonillion", "decillion"};

}  // namespace tts::text::number_words
