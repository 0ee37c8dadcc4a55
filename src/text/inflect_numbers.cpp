#include "tts/text/inflect_numbers.h"

#include <array>
#include <cstdlib>
#include <utility>
#include <vector>

#include "number_words.h"

namespace tts::text {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
int digit_value(char c) { return c - '0'; }

using number_words::kOnes;
using number_words::kScales;  // inflect's scale words; a number needing one more raises there
using number_words::kTens;
// A units digit as inflect words it inside a number: nothing for 0.
const char* unit_word(int digit) { return digit == 0 ? "" : kOnes[digit]; }

// 1..99 as inflect words it: "twelve", "forty", "forty-five".
std::string tens_words(int tens, int units) {
  if (tens == 1) return kOnes[10 + units];
  std::string words = kTens[tens];
  if (tens != 0 && units != 0) words += '-';
  return words + unit_word(units);
}

// inflect builds its words with stray spaces and then collapses them and trims the ends; doing
// the same keeps an empty andword or zero word from leaving a double space.
std::string squeeze(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == ' ' && (out.empty() || out.back() == ' ')) continue;
    out += c;
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string digits_one_by_one(std::string_view digits) {
  std::string words;
  for (char c : digits) {
    if (!words.empty()) words += ' ';
    words += kOnes[digit_value(c)];
  }
  return words;
}

// inflect's group=0 reading of `digits` (no leading zeros; empty is 0). Three-digit groups from
// the right, each "H hundred AND T-U SCALE", empty groups left out, joined by ", ". The one
// irregularity: a last group without hundreds ("eighty-one") after a larger group is joined by
// the andword instead of the comma ("two thousand and eighty-one"; with keithito's empty andword
// "two thousand eighty-one") - a regex of inflect's that only a single trailing word matches.
std::string whole_number_words(std::string_view digits, const InflectOptions& options) {
  if (digits.empty()) return options.zero;
  if (digits == "1") return "one";
  size_t group_count = (digits.size() + 2) / 3;
  if (group_count > kScales.size()) return digits_one_by_one(digits);
  std::vector<std::string> phrases;
  bool last_is_one_word = false;
  size_t begin = 0;
  for (size_t scale = group_count; scale-- > 0;) {
    size_t end = digits.size() - 3 * scale;
    int hundreds = end - begin == 3 ? digit_value(digits[begin]) : 0;
    int tens = end - begin >= 2 ? digit_value(digits[end - 2]) : 0;
    int units = digit_value(digits[end - 1]);
    begin = end;
    if (hundreds == 0 && tens == 0 && units == 0) continue;
    std::string phrase;
    if (hundreds != 0) {
      phrase = std::string(unit_word(hundreds)) + " hundred";
      if (tens != 0 || units != 0) phrase += " " + options.andword + " " + tens_words(tens, units);
    } else {
      phrase = tens_words(tens, units);
    }
    if (scale > 0) phrase += std::string(" ") + kScales[scale];
    phrases.push_back(std::move(phrase));
    last_is_one_word = scale == 0 && hundreds == 0;
  }
  std::string words;
  for (size_t k = 0; k < phrases.size(); ++k) {
    if (k > 0) {
      bool and_joined = k + 1 == phrases.size() && last_is_one_word;
      words += and_joined ? " " + options.andword + " " : ", ";
    }
    words += phrases[k];
  }
  return squeeze(words);
}

// inflect's group=2 reading: pairs of digits from the left ("1904" -> "nineteen, oh four"), an
// odd last digit alone.
std::string pair_words(std::string_view digits, const InflectOptions& options) {
  std::string words;
  for (size_t i = 0; i < digits.size(); i += 2) {
    if (i > 0) words += ", ";
    if (i + 1 == digits.size()) {
      int units = digit_value(digits[i]);
      words += units != 0 ? unit_word(units) : options.zero;
      continue;
    }
    int tens = digit_value(digits[i]);
    int units = digit_value(digits[i + 1]);
    if (tens != 0) {
      words += tens_words(tens, units);
    } else {
      words += options.zero + " " + (units != 0 ? std::string(unit_word(units)) : options.zero);
    }
  }
  return squeeze(words);
}

// inflect turns the last word into its ordinal: "twenty" -> "twentieth", "one" -> "first".
std::string ordinal_words(const std::string& words) {
  static const std::array<std::pair<std::string_view, std::string_view>, 8> kEndings = {{
      {"ty", "tieth"},
      {"one", "first"},
      {"two", "second"},
      {"three", "third"},
      {"five", "fifth"},
      {"eight", "eighth"},
      {"nine", "ninth"},
      {"twelve", "twelfth"},
  }};
  std::string_view view = words;
  for (const auto& [ending, replacement] : kEndings) {
    if (view.size() >= ending.size() && view.substr(view.size() - ending.size()) == ending) {
      return std::string(view.substr(0, view.size() - ending.size())) + std::string(replacement);
    }
  }
  return words + "th";
}

bool ordinal_suffix_at(const std::string& text, size_t i) {
  static constexpr std::array<std::string_view, 4> kSuffixes = {"st", "nd", "rd", "th"};
  for (std::string_view suffix : kSuffixes) {
    if (text.compare(i, suffix.size(), suffix) == 0) return true;
  }
  return false;
}

std::string_view without_leading_zeros(std::string_view digits) {
  size_t first = digits.find_first_not_of('0');
  return first == std::string_view::npos ? std::string_view() : digits.substr(first);
}

// keithito's _expand_number. Four-digit numbers between 1000 and 3000 exclusive are read as years,
// whatever they count.
std::string cardinal_words(std::string_view digits) {
  std::string_view significant = without_leading_zeros(digits);
  int value = significant.size() == 4 ? std::atoi(std::string(significant).c_str()) : 0;
  InflectOptions no_and;
  no_and.andword = "";
  if (value <= 1000 || value >= 3000) return inflect_number_to_words(significant, no_and);
  if (value == 2000) return "two thousand";
  if (value > 2000 && value < 2010) {
    return "two thousand " + inflect_number_to_words(std::to_string(value % 100));
  }
  if (value % 100 == 0) return inflect_number_to_words(std::to_string(value / 100)) + " hundred";
  InflectOptions pairs = no_and;
  pairs.zero = "oh";
  pairs.group = 2;
  std::string words = inflect_number_to_words(significant, pairs);
  std::string joined;
  for (size_t i = 0; i < words.size(); ++i) {
    if (words.compare(i, 2, ", ") == 0) {
      joined += ' ';
      ++i;
    } else {
      joined += words[i];
    }
  }
  return joined;
}

// keithito's _expand_dollars for the digits, '.' and ',' after a '$'. Amounts stay digits here;
// the cardinal pass words them.
std::string dollar_words(const std::string& amount) {
  std::vector<std::string> parts(1);
  for (char c : amount) {
    if (c == '.') {
      parts.emplace_back();
    } else if (c != ',') {  // Python's int() would raise on a stray comma; ignore it instead
      parts.back() += c;
    }
  }
  if (parts.size() > 2) return amount + " dollars";
  std::string dollars(without_leading_zeros(parts[0]));
  std::string cents(parts.size() > 1 ? without_leading_zeros(parts[1]) : std::string_view());
  auto unit = [](const std::string& value, const char* one, const char* many) {
    return value + " " + (value == "1" ? one : many);
  };
  if (!dollars.empty() && !cents.empty()) {
    return unit(dollars, "dollar", "dollars") + ", " + unit(cents, "cent", "cents");
  }
  if (!dollars.empty()) return unit(dollars, "dollar", "dollars");
  if (!cents.empty()) return unit(cents, "cent", "cents");
  return "zero dollars";
}

size_t digits_end(const std::string& text, size_t i) {
  while (i < text.size() && is_digit(text[i])) ++i;
  return i;
}

// End of the longest run from `begin` of digits and `extra` characters that ends in a digit, or
// `begin` when there is none: what a greedy "[0-9<extra>]*[0-9]" matches there.
size_t run_ending_in_digit(const std::string& text, size_t begin, std::string_view extra) {
  size_t end = begin;
  while (end < text.size() && (is_digit(text[end]) || extra.find(text[end]) != extra.npos)) ++end;
  while (end > begin && !is_digit(text[end - 1])) --end;
  return end;
}

// _comma_number_re: a digit, then digits and commas, then a digit; its commas are dropped.
std::string remove_commas(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    if (!is_digit(text[i])) {
      out += text[i++];
      continue;
    }
    size_t end = run_ending_in_digit(text, i, ",");
    bool matched = end >= i + 3;
    for (size_t k = i; k < end; ++k) {
      if (!(matched && text[k] == ',')) out += text[k];
    }
    i = end;
  }
  return out;
}

// _pounds_re and _dollars_re: the sign, then digits and `extra` characters ending in a digit.
template <class Expand>
std::string expand_currency(const std::string& text, std::string_view sign, std::string_view extra,
                            Expand expand) {
  std::string out;
  out.reserve(text.size() + 16);
  size_t i = 0;
  while (i < text.size()) {
    if (text.compare(i, sign.size(), sign) != 0) {
      out += text[i++];
      continue;
    }
    size_t begin = i + sign.size();
    size_t end = run_ending_in_digit(text, begin, extra);
    if (end == begin) {
      out += sign;
    } else {
      out += expand(text.substr(begin, end - begin));
    }
    i = end;
  }
  return out;
}

// Rewrites every maximal digit run with `expand(text, begin, end, out)`, which appends what
// replaces the run and returns where scanning goes on (at least `end`).
template <class Expand>
std::string for_each_digit_run(const std::string& text, Expand expand) {
  std::string out;
  out.reserve(text.size() * 2);
  size_t i = 0;
  while (i < text.size()) {
    if (!is_digit(text[i])) {
      out += text[i++];
      continue;
    }
    i = expand(text, i, digits_end(text, i), out);
  }
  return out;
}

}  // namespace

std::string inflect_number_to_words(std::string_view number, const InflectOptions& options) {
  bool ordinal = number.size() >= 2 && !is_digit(number.back());
  std::string_view digits = ordinal ? number.substr(0, number.size() - 2) : number;
  std::string words = options.group == 2
                          ? pair_words(digits, options)
                          : whole_number_words(without_leading_zeros(digits), options);
  return ordinal ? ordinal_words(words) : words;
}

std::string normalize_numbers(const std::string& text) {
  std::string out = remove_commas(text);
  out = expand_currency(out, "\xC2\xA3", ",",
                        [](const std::string& amount) { return amount + " pounds"; });
  out = expand_currency(out, "$", ".,", dollar_words);
  out = for_each_digit_run(out, [](const std::string& s, size_t begin, size_t end, std::string& o) {
    o.append(s, begin, end - begin);
    if (end + 1 < s.size() && s[end] == '.' && is_digit(s[end + 1])) {
      size_t fraction_end = digits_end(s, end + 1);
      o += " point ";
      o.append(s, end + 1, fraction_end - end - 1);
      return fraction_end;
    }
    return end;
  });
  out = for_each_digit_run(out, [](const std::string& s, size_t begin, size_t end, std::string& o) {
    if (!ordinal_suffix_at(s, end)) {
      o.append(s, begin, end - begin);
      return end;
    }
    o += inflect_number_to_words(std::string_view(s).substr(begin, end + 2 - begin));
    return end + 2;
  });
  return for_each_digit_run(out,
                            [](const std::string& s, size_t begin, size_t end, std::string& o) {
                              o += cardinal_words(std::string_view(s).substr(begin, end - begin));
                              return end;
                            });
}

}  // namespace tts::text
