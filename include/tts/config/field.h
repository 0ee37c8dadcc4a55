// The reflection mechanism behind the typed config. Every options struct lists its fields once,
// in a `visit(Visitor&)` member:
//
//   template <class V> void visit(V& v) {
//     v("n_fft", n_fft, "FFT size; linear targets have n_fft/2+1 bins");
//     v("mel_scale", mel_scale, "mel formula", Choices{"slaney", "htk"});
//   }
//
// and parsing, dumping, `--set` overrides, unknown-key suggestions and choice checks are all
// driven by that list (src/config/config.cpp). Supported field types: bool, int, int64_t, double,
// std::string, std::vector<std::string>, std::vector<int>, std::vector<double>,
// std::vector<std::vector<int>> (a list of integer lists, e.g. train.r_schedule).
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

#include "tts/core/error.h"

namespace tts::config {

// Allowed values of a string field; empty means any value.
using Choices = std::vector<std::string>;

// For validate(): throws UsageError "<key> = <value>: <rule>" when `ok` is false. `key` is the
// full path ("audio.win_length"); `rule` states what is required and, where useful, the fix.
template <class T>
void require(bool ok, const char* key, const T& value, const std::string& rule) {
  if (!ok) throw UsageError(fmt::format("config: {} = {}: {}", key, value, rule));
}

}  // namespace tts::config
