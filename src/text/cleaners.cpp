#include "tts/text/cleaners.h"

#include <array>
#include <cctype>
#include <cstdlib>
#include <string_view>
#include <utility>

#include "number_words.h"
#include "tts/text/inflect_numbers.h"

namespace tts::text {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_alnum(char c) { return is_digit(c) || is_alpha(c); }
// Python's \s on ASCII: the information separators 0x1C-0x1F count as whitespace too.
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' ||
         (c >= '\x1c' && c <= '\x1f');
}
// A byte of a \w character of Python's: ASCII letters, digits and '_', and (taking every
// non-ASCII character left after transliteration as a letter) any byte of a multi-byte one.
bool is_word_byte(char c) {
  return is_alnum(c) || c == '_' || static_cast<unsigned char>(c) >= 0x80;
}
char to_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

// ---- UTF-8 -------------------------------------------------------------------------------------

// Decodes the code point at text[i] and sets `length` to its byte count. A byte that does not
// start a valid sequence is taken as Latin-1 (legacy transcripts), length 1.
char32_t decode(const std::string& text, size_t i, size_t& length) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char lead = byte(i);
  size_t extra = lead < 0x80           ? 0
                 : (lead >> 5) == 0x6  ? 1
                 : (lead >> 4) == 0xE  ? 2
                 : (lead >> 3) == 0x1E ? 3
                                       : 4;
  if (extra == 0 || extra == 4 || i + extra >= text.size()) {
    length = 1;
    return lead;
  }
  char32_t code = lead & (0x3F >> extra);
  for (size_t k = 1; k <= extra; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) {
      length = 1;
      return lead;
    }
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  length = extra + 1;
  return code;
}

// ASCII spellings of U+00C0..U+00FF.
constexpr std::array<const char*, 64> kLatin1Letters = {
    "A", "A", "A", "A", "A", "A", "AE", "C", "E", "E", "E", "E", "I", "I", "I",  "I",
    "D", "N", "O", "O", "O", "O", "O",  "x", "O", "U", "U", "U", "U", "Y", "Th", "ss",
    "a", "a", "a", "a", "a", "a", "ae", "c", "e", "e", "e", "e", "i", "i", "i",  "i",
    "d", "n", "o", "o", "o", "o", "o",  "/", "o", "u", "u", "u", "u", "y", "th", "y"};

// ASCII spellings of U+0100..U+017F (Latin Extended-A).
constexpr std::array<const char*, 128> kLatinExtendedA = {
    "A", "a", "A",  "a",  "A", "a", "C", "c", "C", "c",  "C",  "c",  "C", "c", "D", "d",
    "D", "d", "E",  "e",  "E", "e", "E", "e", "E", "e",  "E",  "e",  "G", "g", "G", "g",
    "G", "g", "G",  "g",  "H", "h", "H", "h", "I", "i",  "I",  "i",  "I", "i", "I", "i",
    "I", "i", "IJ", "ij", "J", "j", "K", "k", "k", "L",  "l",  "L",  "l", "L", "l", "L",
    "l", "L", "l",  "N",  "n", "N", "n", "N", "n", "'n", "NG", "ng", "O", "o", "O", "o",
    "O", "o", "OE", "oe", "R", "r", "R", "r", "R", "r",  "S",  "s",  "S", "s", "S", "s",
    "S", "s", "T",  "t",  "T", "t", "T", "t", "U", "u",  "U",  "u",  "U", "u", "U", "u",
    "U", "u", "U",  "u",  "W", "w", "Y", "y", "Y", "Z",  "z",  "Z",  "z", "Z", "z", "s"};

// Other characters with an ASCII spelling: spaces, invisible marks, quotes, dashes.
constexpr std::pair<char32_t, const char*> kPunctuationAndSpaces[] = {
    {0xA0, " "},    {0x2000, " "},  {0x2001, " "},   {0x2002, " "},  {0x2003, " "},  {0x2004, " "},
    {0x2005, " "},  {0x2006, " "},  {0x2007, " "},   {0x2008, " "},  {0x2009, " "},  {0x200A, " "},
    {0x202F, " "},  {0x205F, " "},  {0x3000, " "},   {0xAD, ""},     {0x200B, ""},   {0x200C, ""},
    {0x200D, ""},   {0xFEFF, ""},   {0xA1, "!"},     {0xBF, "?"},    {0xAB, "\""},   {0xBB, "\""},
    {0x201C, "\""}, {0x201D, "\""}, {0x201E, "\""},  {0x201F, "\""}, {0x2033, "\""}, {0xB4, "'"},
    {0x2018, "'"},  {0x2019, "'"},  {0x201A, "'"},   {0x201B, "'"},  {0x2032, "'"},  {0x2039, "'"},
    {0x203A, "'"},  {0x2010, "-"},  {0x2011, "-"},   {0x2012, "-"},  {0x2013, "-"},  {0x2014, "-"},
    {0x2015, "-"},  {0x2212, "-"},  {0x2026, "..."}, {0x192, "f"},   {0x1E9E, "SS"},
};

// The ASCII spelling of `code`, or nullptr when it has none (the character is kept).
const char* ascii_spelling(char32_t code) {
  if (code >= 0xC0 && code <= 0xFF) return kLatin1Letters[code - 0xC0];
  if (code >= 0x100 && code <= 0x17F) return kLatinExtendedA[code - 0x100];
  if (code >= 0x300 && code <= 0x36F) return "";  // combining accents of decomposed letters
  for (const auto& [from, to] : kPunctuationAndSpaces) {
    if (code == from) return to;
  }
  return nullptr;
}

// Python's unidecode 1.3 spells these otherwise than ascii_spelling() does (and spells every
// symbol of U+00A0..U+00BF and every C1 control). NVIDIA's english_cleaners starts with unidecode,
// so "£5" there is "psfive" and an em dash is "--".
constexpr std::array<const char*, 32> kUnidecodeLatin1Symbols = {
    " ",  "!", "C/", "PS",  "$?", "Y=",  "|",    "SS",   "\"",   "(c)", "a",
    "<<", "!", "",   "(r)", "-",  "deg", "+-",   "2",    "3",    "'",   "u",
    "P",  "*", ",",  "1",   "o",  ">>",  " 1/4", " 1/2", " 3/4", "?"};
constexpr std::pair<char32_t, const char*> kUnidecodeDifferences[] = {
    {0x14A, "ng"}, {0x14B, "NG"},  {0x201A, ","},  {0x201E, ",,"}, {0x2033, "''"}, {0x2039, "<"},
    {0x203A, ">"}, {0x2014, "--"}, {0x2015, "--"}, {0x1E9E, "Ss"}, {0x200B, " "},
};
// unidecode keeps the letter of a combining Latin small letter (U+0363..U+036F).
constexpr std::array<const char*, 13> kCombiningLetters = {"a", "e", "i", "o", "u", "c", "d",
                                                           "h", "m", "r", "t", "v", "x"};

const char* unidecode_spelling(char32_t code) {
  if (code >= 0x80 && code <= 0x9F) return "";
  if (code >= 0xA0 && code <= 0xBF) return kUnidecodeLatin1Symbols[code - 0xA0];
  if (code >= 0x363 && code <= 0x36F) return kCombiningLetters[code - 0x363];
  for (const auto& [from, to] : kUnidecodeDifferences) {
    if (code == from) return to;
  }
  return ascii_spelling(code);
}

// Replaces every non-ASCII character that `spelling` has an ASCII spelling for.
std::string transliterate_with(const std::string& text, const char* (*spelling)(char32_t)) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      out += text[i++];
      continue;
    }
    size_t length = 1;
    char32_t code = decode(text, i, length);
    const char* ascii = spelling(code);
    if (ascii != nullptr) {
      out += ascii;
    } else if (length == 1) {  // a stray Latin-1 byte: re-encode it as UTF-8
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out.append(text, i, length);
    }
    i += length;
  }
  return out;
}

// ---- numbers -----------------------------------------------------------------------------------

using number_words::kOnes;
using number_words::kScales;
using number_words::kTens;
// The scales this reader words, up to quintillion (19 digits: every uint64).
constexpr size_t kScaleCount = 7;

// 1..999.
std::string under_thousand(unsigned n) {
  std::string words;
  if (n >= 100) {
    words = std::string(kOnes[n / 100]) + " hundred";
    n %= 100;
    if (n == 0) return words;
    words += ' ';
  }
  if (n < 20) return words + kOnes[n];
  words += kTens[n / 10];
  if (n % 10 != 0) words += std::string("-") + kOnes[n % 10];
  return words;
}

std::string digits_one_by_one(std::string_view digits) {
  std::string words;
  for (char c : digits) {
    if (!words.empty()) words += ' ';
    words += kOnes[c - '0'];
  }
  return words;
}

// A number as written: integer digits (comma groups removed), optional fraction digits.
struct NumberToken {
  std::string integer;
  std::string fraction;
  bool grouped = false;  // written with thousands separators ("1,000")
  size_t end = 0;        // index after the number in the source text
};

size_t digits_end(const std::string& text, size_t i) {
  while (i < text.size() && is_digit(text[i])) ++i;
  return i;
}

// Parses the number starting at text[i] (a digit). "1,000" is one number only when every group
// after the first has exactly three digits; "1,2" stays a list. A '.' followed by a digit starts
// the fraction, so "3.5" is a decimal and never a thousands separator.
NumberToken parse_number(const std::string& text, size_t i) {
  NumberToken token;
  size_t j = digits_end(text, i);
  token.integer = text.substr(i, j - i);
  if (token.integer.size() <= 3) {
    while (j + 3 < text.size() && text[j] == ',' && digits_end(text, j + 1) == j + 4) {
      token.integer += text.substr(j + 1, 3);
      token.grouped = true;
      j += 4;
    }
  }
  if (j + 1 < text.size() && text[j] == '.' && is_digit(text[j + 1])) {
    size_t fraction_end = digits_end(text, j + 1);
    token.fraction = text.substr(j + 1, fraction_end - j - 1);
    j = fraction_end;
  }
  token.end = j;
  return token;
}

// Integer digits as a cardinal; "007" and numbers too long for 64 bits are read digit by digit.
std::string cardinal(const std::string& digits) {
  if ((digits.size() > 1 && digits[0] == '0') || digits.size() > 19) {
    return digits_one_by_one(digits);
  }
  return number_to_words(std::strtoull(digits.c_str(), nullptr, 10));
}

std::string decimal(const NumberToken& token) {
  std::string words = cardinal(token.integer);
  if (!token.fraction.empty()) words += " point " + digits_one_by_one(token.fraction);
  return words;
}

// Case-insensitive match of the lowercase word `word` at text[i], followed by a non-letter.
bool word_at(const std::string& text, size_t i, std::string_view word) {
  if (i + word.size() > text.size()) return false;
  for (size_t k = 0; k < word.size(); ++k) {
    if (to_lower(text[i + k]) != word[k]) return false;
  }
  return i + word.size() == text.size() || !is_alpha(text[i + word.size()]);
}

struct Currency {
  const char* unit;
  const char* units;
  const char* subunit;
  const char* subunits;
};
constexpr Currency kDollar{"dollar", "dollars", "cent", "cents"};
constexpr Currency kPound{"pound", "pounds", "penny", "pence"};

// "$3.50" -> "three dollars, fifty cents"; "$2 million" -> "two million dollars". Sets `end` past
// what was consumed (a scale word included).
std::string currency_words(const std::string& text, const NumberToken& token,
                           const Currency& currency, size_t& end) {
  end = token.end;
  for (size_t scale = 1; scale < kScaleCount; ++scale) {
    if (end < text.size() && text[end] == ' ' && word_at(text, end + 1, kScales[scale])) {
      end += 1 + std::string_view(kScales[scale]).size();
      return decimal(token) + " " + kScales[scale] + " " + currency.units;
    }
  }
  if (token.fraction.size() > 2) return decimal(token) + " " + currency.units;
  bool fits = token.integer.size() <= 19;  // in 64 bits
  unsigned long long whole_value = fits ? std::strtoull(token.integer.c_str(), nullptr, 10) : 0;
  std::string whole = fits ? number_to_words(whole_value) : digits_one_by_one(token.integer);
  bool has_whole = !fits || whole_value > 0;
  unsigned cents = 0;
  if (!token.fraction.empty()) {
    std::string padded = token.fraction + std::string(2 - token.fraction.size(), '0');
    cents = static_cast<unsigned>(std::atoi(padded.c_str()));
  }
  std::string units = fits && whole_value == 1 ? currency.unit : currency.units;
  std::string subunits = cents == 1 ? currency.subunit : currency.subunits;
  if (has_whole && cents > 0) {
    return whole + " " + units + ", " + number_to_words(cents) + " " + subunits;
  }
  if (cents > 0) return number_to_words(cents) + " " + subunits;
  return (has_whole ? whole : std::string("zero")) + " " + units;
}

// The ordinal suffix (st, nd, rd, th, any case) at text[i], followed by a non-letter.
bool ordinal_suffix_at(const std::string& text, size_t i) {
  return word_at(text, i, "st") || word_at(text, i, "nd") || word_at(text, i, "rd") ||
         word_at(text, i, "th");
}

// Appends `words` to `out`, separated by a space from a letter or digit before it.
void append_words(std::string& out, const std::string& words) {
  if (!out.empty() && is_alnum(out.back())) out += ' ';
  out += words;
}

constexpr std::string_view kPoundSign = "\xC2\xA3";

struct Abbreviation {
  std::string_view abbreviation;
  std::string_view expansion;
};
// keithito/tacotron's list.
constexpr std::array<Abbreviation, 18> kAbbreviations = {{
    {"mrs", "misess"},
    {"mr", "mister"},
    {"dr", "doctor"},
    {"st", "saint"},
    {"co", "company"},
    {"jr", "junior"},
    {"maj", "major"},
    {"gen", "general"},
    {"drs", "doctors"},
    {"rev", "reverend"},
    {"lt", "lieutenant"},
    {"hon", "honorable"},
    {"sgt", "sergeant"},
    {"capt", "captain"},
    {"esq", "esquire"},
    {"ltd", "limited"},
    {"col", "colonel"},
    {"ft", "fort"},
}};

}  // namespace

// ---- public steps ----------------------------------------------------------------------------

std::string number_to_words(unsigned long long number) {
  if (number == 0) return "zero";
  std::array<unsigned, kScaleCount> groups{};
  size_t count = 0;
  while (number > 0) {
    groups[count++] = static_cast<unsigned>(number % 1000);
    number /= 1000;
  }
  std::string words;
  for (size_t k = count; k-- > 0;) {
    if (groups[k] == 0) continue;
    if (!words.empty()) words += ", ";  // as LJSpeech's normalized transcripts write it
    words += under_thousand(groups[k]);
    if (k > 0) words += std::string(" ") + kScales[k];
  }
  return words;
}

std::string year_to_words(int year) {
  if (year <= 1000 || year >= 3000) return number_to_words(static_cast<unsigned long long>(year));
  if (year == 2000) return "two thousand";
  if (year > 2000 && year < 2010) return std::string("two thousand ") + kOnes[year - 2000];
  std::string century = under_thousand(static_cast<unsigned>(year / 100));
  int rest = year % 100;
  if (rest == 0) return century + " hundred";
  if (rest < 10) return century + " oh " + kOnes[rest];
  return century + " " + under_thousand(static_cast<unsigned>(rest));
}

std::string ordinal_to_words(unsigned long long number) {
  std::string words = number_to_words(number);
  size_t start = words.find_last_of(" -");
  start = start == std::string::npos ? 0 : start + 1;
  std::string last = words.substr(start);
  words.erase(start);
  static const std::array<std::pair<std::string_view, std::string_view>, 7> kIrregular = {{
      {"one", "first"},
      {"two", "second"},
      {"three", "third"},
      {"five", "fifth"},
      {"eight", "eighth"},
      {"nine", "ninth"},
      {"twelve", "twelfth"},
  }};
  for (const auto& [cardinal_word, ordinal_word] : kIrregular) {
    if (last == cardinal_word) return words + std::string(ordinal_word);
  }
  if (last.back() == 'y') return words + last.substr(0, last.size() - 1) + "ieth";
  return words + last + "th";
}

std::string expand_numbers(const std::string& text) {
  std::string out;
  out.reserve(text.size() + 16);
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    const Currency* currency = nullptr;
    size_t number_start = i;
    if (c == '$') {
      currency = &kDollar;
      number_start = i + 1;
    } else if (text.compare(i, kPoundSign.size(), kPoundSign) == 0) {
      currency = &kPound;
      number_start = i + kPoundSign.size();
    }
    if (number_start >= text.size() || !is_digit(text[number_start])) {
      out += c;
      ++i;
      continue;
    }
    NumberToken token = parse_number(text, number_start);
    size_t end = token.end;
    std::string words;
    if (currency != nullptr) {
      words = currency_words(text, token, *currency, end);
    } else if (token.fraction.empty() && ordinal_suffix_at(text, end) &&
               token.integer.size() <= 19) {
      words = ordinal_to_words(std::strtoull(token.integer.c_str(), nullptr, 10));
      end += 2;
    } else if (!token.grouped && token.fraction.empty() && token.integer.size() == 4 &&
               token.integer[0] != '0') {
      words = year_to_words(std::atoi(token.integer.c_str()));
    } else {
      words = decimal(token);
    }
    if (end < text.size() && text[end] == '%') {
      words += " percent";
      ++end;
    }
    append_words(out, words);
    if (end < text.size() && is_alpha(text[end])) out += ' ';
    i = end;
  }
  return out;
}

std::string transliterate(const std::string& text) {
  return transliterate_with(text, ascii_spelling);
}

std::string unidecode(const std::string& text) {
  return transliterate_with(text, unidecode_spelling);
}

std::string lowercase(const std::string& text) {
  std::string out = text;
  for (char& c : out) c = to_lower(c);
  return out;
}

std::string collapse_whitespace_runs(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool after_space = false;
  for (char c : text) {
    bool space = is_space(c);
    if (!(space && after_space)) out += space ? ' ' : c;
    after_space = space;
  }
  return out;
}

std::string collapse_whitespace(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool pending_space = false;
  for (char c : text) {
    if (is_space(c)) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out += ' ';
    pending_space = false;
    out += c;
  }
  return out;
}

std::string expand_abbreviations(const std::string& text) {
  // One pass per abbreviation, in the list's order, as keithito's regexes run: an expansion can
  // take away the word boundary that a later abbreviation needs ("st.co." -> "saintco.").
  std::string current = text;
  for (const auto& [abbreviation, expansion] : kAbbreviations) {
    std::string out;
    out.reserve(current.size() + 16);
    size_t i = 0;
    while (i < current.size()) {
      size_t end = i + abbreviation.size();
      bool at_word_start = i == 0 || !is_word_byte(current[i - 1]);
      if (at_word_start && end < current.size() && current[end] == '.' &&
          word_at(current, i, abbreviation)) {
        out += expansion;
        i = end + 1;
      } else {
        out += current[i++];
      }
    }
    current = std::move(out);
  }
  return current;
}

// ---- cleaners ----------------------------------------------------------------------------------

std::string basic_cleaners(const std::string& text) { return collapse_whitespace(lowercase(text)); }

std::string transliteration_cleaners(const std::string& text) {
  return collapse_whitespace(lowercase(transliterate(text)));
}

std::string english_cleaners(const std::string& text) {
  return collapse_whitespace_runs(
      expand_abbreviations(normalize_numbers(lowercase(unidecode(text)))));
}

std::string english_cleaners_corrected(const std::string& text) {
  // Numbers first, so that '£' is still there to be read (a transliteration to ASCII first
  // would turn "£5" into "PS5", as Python's unidecode does in keithito's cleaners).
  return collapse_whitespace(expand_abbreviations(lowercase(transliterate(expand_numbers(text)))));
}

}  // namespace tts::text
