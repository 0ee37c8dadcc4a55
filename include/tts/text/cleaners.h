// Text cleaners: normalization applied to a transcript before it becomes symbol ids. Each cleaner
// maps UTF-8 text to text; text.cleaners chains them by name. The rules follow keithito/tacotron's
// cleaners.py, which NVIDIA/tacotron2 and Rayhane's Tacotron-2 copy. english_cleaners gives the
// text NVIDIA's gives, so that models and checkpoints trained there see the same symbols here;
// english_cleaners_corrected reads numbers as LJSpeech's own normalized transcripts do and fixes
// keithito's known faults: "£1,000" is "one thousand pounds" (not "psone thousand"), "3.5" is
// "three point five" (and "3.25" "three point two five", not "three point twenty-five"), "2,219"
// is "two thousand, two hundred nineteen" (not a year), "50%" is "fifty percent", "$3.5" is
// "three dollars, fifty cents" (not "five cents"), "B12" is "b twelve" (not "btwelve").
#pragma once

#include <string>
#include <vector>

namespace tts::text {

// Lowercase (ASCII letters) and collapse runs of whitespace into one space; trims both ends.
std::string basic_cleaners(const std::string& text);

// UTF-8 -> ASCII transliteration (é -> e, ß -> ss, curly quotes -> straight, dashes -> '-',
// ellipsis -> "..."), then basic_cleaners. Characters without an ASCII spelling are kept (the
// symbol lookup then drops or rejects them, per text.unknown).
std::string transliteration_cleaners(const std::string& text);

// NVIDIA/tacotron2's english_cleaners: transliteration, lowercase, numbers as keithito's
// normalize_numbers reads them (inflect_numbers.h), abbreviations expanded ("mr." -> "mister"),
// whitespace runs collapsed to one space (the ends are not trimmed, as NVIDIA's are not).
std::string english_cleaners(const std::string& text);

// Numbers, currency and percent expanded as LJSpeech's normalized transcripts read them
// (expand_numbers), transliteration, lowercase, abbreviations expanded, whitespace collapsed and
// trimmed.
std::string english_cleaners_corrected(const std::string& text);

// The individual steps, for callers that compose their own chain.
std::string transliterate(const std::string& text);
// transliterate() with Python unidecode's spellings where they differ ("£" -> "PS", "«" -> "<<",
// "—" -> "--", "½" -> " 1/2"), as NVIDIA's english_cleaners transliterates. Covers what
// transliterate() covers (Latin-1, Latin Extended-A, common punctuation) plus every character of
// U+0080..U+00BF; characters of other scripts are kept, where unidecode would spell them.
std::string unidecode(const std::string& text);
std::string lowercase(const std::string& text);
// Runs of whitespace -> one space; trims both ends.
std::string collapse_whitespace(const std::string& text);
// Runs of whitespace -> one space, ends kept (keithito's collapse_whitespace).
std::string collapse_whitespace_runs(const std::string& text);
// "mr." -> "mister", "dr." -> "doctor", ... at the start of a word, any case; the period is
// consumed.
std::string expand_abbreviations(const std::string& text);
// english_cleaners_corrected's numbers: cardinals (with comma groups), decimals digit by digit,
// ordinals, years, $ and £ amounts, percentages. (english_cleaners uses normalize_numbers.)
std::string expand_numbers(const std::string& text);

// Words for a non-negative integer, as in LJSpeech's normalized transcripts:
// 1234 -> "one thousand, two hundred thirty-four".
std::string number_to_words(unsigned long long number);
// "1884" -> "eighteen eighty-four", "1905" -> "nineteen oh five", "2010" -> "twenty ten".
std::string year_to_words(int year);
// 21 -> "twenty-first".
std::string ordinal_to_words(unsigned long long number);

}  // namespace tts::text
