// Text cleaners: normalization applied to a transcript before it becomes symbol ids. Each cleaner
// maps UTF-8 text to text; text.cleaners chains them by name. The rules follow keithito/tacotron's
// cleaners.py (which NVIDIA/tacotron2 and Rayhane's Tacotron-2 copy), fixing its known faults:
// "£1,000" is "one thousand pounds" (not "PS1,000"), "3.5" is "three point five", "50%" is
// "fifty percent", "$3.5" is "three dollars, fifty cents".
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

// Numbers, currency and percent expanded to words, transliteration, lowercase, abbreviations
// expanded ("mr." -> "mister"), whitespace collapsed.
std::string english_cleaners(const std::string& text);

// The individual steps, for callers that compose their own chain.
std::string transliterate(const std::string& text);
std::string lowercase(const std::string& text);
std::string collapse_whitespace(const std::string& text);
// "mr." -> "mister", "dr." -> "doctor", ... (lowercase input; the period is consumed).
std::string expand_abbreviations(const std::string& text);
// Cardinals (with comma groups), decimals, ordinals, years, $ and £ amounts, percentages.
std::string expand_numbers(const std::string& text);

// Words for a non-negative integer, as in LJSpeech's normalized transcripts:
// 1234 -> "one thousand, two hundred thirty-four".
std::string number_to_words(unsigned long long number);
// "1884" -> "eighteen eighty-four", "1905" -> "nineteen oh five", "2010" -> "twenty ten".
std::string year_to_words(int year);
// 21 -> "twenty-first".
std::string ordinal_to_words(unsigned long long number);

// Names accepted in text.cleaners.
std::vector<std::string> cleaner_names();

}  // namespace tts::text
