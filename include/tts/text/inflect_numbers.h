// Numbers as NVIDIA/tacotron2's english_cleaners reads them: keithito/tacotron's text/numbers.py
// (normalize_numbers) over Python inflect's engine.number_to_words, as inflect 2.1.0 (Debian 12's)
// words them. The readings are reproduced quirks and all, because a model trained with NVIDIA's
// text front end (or one of NVIDIA's checkpoints) expects exactly that text:
//   "204.613" -> "two hundred four point six hundred thirteen"  (each side of the point alone)
//   "2,219"   -> "twenty-two nineteen"                          (commas go first; then a "year")
//   "1570th"  -> "one thousand, five hundred and seventieth"   (ordinals keep inflect's "and")
//   "5081"    -> "five thousand eighty-one"                     (no comma before a last group
//                                                                 without hundreds)
// english_cleaners_corrected (cleaners.h) has the readings we would rather train on.
#pragma once

#include <string>
#include <string_view>

namespace tts::text {

// The arguments of inflect's number_to_words that keithito's code sets.
struct InflectOptions {
  std::string andword = "and";  // between hundreds and tens, and before a last group under 100
  std::string zero = "zero";    // the word for a 0 digit when reading in groups
  int group = 0;                // 0: the whole number; 2: pairs of digits ("19", "04")
};

// inflect's number_to_words(number, group=, andword=, zero=) for `number`: ASCII digits, optionally
// followed by an ordinal suffix (st, nd, rd, th), which makes the reading ordinal whatever the
// digits ("4st" -> "fourth"). Leading zeros are ignored. Where inflect gives up (37 digits or
// more, past "decillion", where NVIDIA's cleaner raises), each digit is read on its own.
std::string inflect_number_to_words(std::string_view number, const InflectOptions& options = {});

// keithito's normalize_numbers: its regex passes in order over `text` (lowercase ASCII, as
// english_cleaners hands it over): commas inside digit runs removed ("1,2" is "12"), "£N" ->
// "N pounds", "$D.C" -> "D dollars, C cents", "A.B" -> "A point B", ordinals ("21st"), then every
// remaining digit run as a cardinal, 1001-2999 read as years ("nineteen oh four", "twenty-one
// hundred", "two thousand five"). Digits run into neighbouring letters unspaced ("b12" ->
// "btwelve"), as NVIDIA's do.
std::string normalize_numbers(const std::string& text);

}  // namespace tts::text
