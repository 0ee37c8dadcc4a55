// The reflection mechanism behind the typed config. Every options struct lists its fields once,
// in a `visit(Visitor&)` member:
//
//   template <class V> void visit(V& v) {
//     v("n_fft", n_fft, "FFT size; linear targets have n_fft/2+1 bins");
//     v("mel_scale", mel_scale, "mel formula: slaney or htk");
//   }
//
// and parsing, dumping, `--set` overrides and unknown-key suggestions are all driven by that list
// (src/config/config.cpp). Supported field types: bool, int, int64_t, double, std::string,
// std::vector<std::string>, std::vector<int>, std::vector<double>, std::vector<std::vector<int>>
// (a list of integer lists, e.g. train.r_schedule), and choices.
//
// A choice is an enum class whose names are listed once, with TTS_CHOICE_NAMES inside namespace
// tts::config:
//
//   enum class MelScale { kSlaney, kHtk };
//   TTS_CHOICE_NAMES(MelScale, {MelScale::kSlaney, "slaney"}, {MelScale::kHtk, "htk"});
//
// The config file holds the name; parsing turns it into the enum once, at the config boundary (an
// unknown name is an error naming the file and line and every allowed name), and the rest of the
// code switches on the enum, so the compiler tells us when a case is missing. fmt prints a choice
// by its name.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tts/core/error.h"

namespace tts::config {

// Specialized by TTS_CHOICE_NAMES for each choice: `names`, an array of {value, name}.
template <class E>
struct ChoiceNames;

template <class E, class = void>
struct is_choice : std::false_type {};
template <class E>
struct is_choice<E, std::void_t<decltype(ChoiceNames<E>::names)>> : std::true_type {};
template <class E>
inline constexpr bool is_choice_v = is_choice<E>::value;
// A list of choices (text.cleaners): each item parsed and printed as a choice.
template <class T>
struct is_choice_list : std::false_type {};
template <class E>
struct is_choice_list<std::vector<E>> : is_choice<E> {};
template <class T>
inline constexpr bool is_choice_list_v = is_choice_list<T>::value;

// The config's name of `value` ("slaney").
template <class E>
constexpr std::string_view choice_name(E value) {
  for (const auto& [v, name] : ChoiceNames<E>::names) {
    if (v == value) return name;
  }
  return "?";  // unreachable for a value of the enum: every enumerator has a name (tested)
}

// The value named `name`, or nullopt.
template <class E>
std::optional<E> parse_choice(std::string_view name) {
  for (const auto& [v, n] : ChoiceNames<E>::names) {
    if (n == name) return v;
  }
  return std::nullopt;
}

// The value named `name`; throws UsageError "`where` 'name': expected one of ..." otherwise (for
// choices given on a command line: `where` is the option, "--backend").
template <class E>
E require_choice(std::string_view name, const std::string& where);

// Every name, in declaration order ("slaney, htk" in messages).
template <class E>
std::vector<std::string> choice_names() {
  std::vector<std::string> names;
  for (const auto& [v, n] : ChoiceNames<E>::names) names.emplace_back(n);
  return names;
}

// Streams print a choice by its name too (test messages).
template <class E, std::enable_if_t<is_choice_v<E>, int> = 0>
std::ostream& operator<<(std::ostream& out, E value) {
  return out << choice_name(value);
}

template <class E>
E require_choice(std::string_view name, const std::string& where) {
  if (std::optional<E> value = parse_choice<E>(name)) return *value;
  throw UsageError(
      fmt::format("{} '{}': expected one of {}", where, name, fmt::join(choice_names<E>(), ", ")));
}

// For validate(): throws RuleError (a UsageError) "<key> = <value>: <rule>" when `ok` is false.
// `key` is the full path ("audio.win_length"); `rule` states what is required and, where useful,
// the fix. The error of a broken rule, with the key, so that parsing can say where the value was
// set.
class RuleError : public UsageError {
 public:
  RuleError(const std::string& key, const std::string& message) : UsageError(message), key_(key) {}
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

template <class T>
void require(bool ok, const char* key, const T& value, const std::string& rule) {
  if (!ok) throw RuleError(key, fmt::format("config: {} = {}: {}", key, value, rule));
}

// For validate(): the ceiling of a number that sizes memory, with `why` no real setup reaches it
// ("NVIDIA's widest layer has 1024 units").
template <class T>
void require_at_most(const char* key, const T& value, const T& ceiling, const char* why) {
  require(value <= ceiling, key, value,
          fmt::format("must be at most {} ({}; the number sizes memory)", ceiling, why));
}

}  // namespace tts::config

#define TTS_CHOICE_NAMES(Enum, ...)                                             \
  template <>                                                                   \
  struct ChoiceNames<Enum> {                                                    \
    static constexpr std::pair<Enum, std::string_view> names[] = {__VA_ARGS__}; \
  }

// fmt prints a choice by its config name.
template <class E>
struct fmt::formatter<E, char, std::enable_if_t<tts::config::is_choice_v<E>>>
    : fmt::formatter<std::string_view> {
  template <class Context>
  auto format(E value, Context& ctx) const {
    return fmt::formatter<std::string_view>::format(tts::config::choice_name(value), ctx);
  }
};
