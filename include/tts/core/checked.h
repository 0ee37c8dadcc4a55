// Overflow-safe arithmetic for sizes read from files. A hostile header can hold any 64-bit value;
// products and sums of such values must be checked before they size an allocation or an index,
// since a wrapped result passes every later "fits in the file" comparison.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace tts {

// a * b, or nullopt when it does not fit in int64_t.
inline std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// a + b, or nullopt when it does not fit in int64_t.
inline std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// The product of `dims` (1 for none), or nullopt when one is negative or the product overflows.
inline std::optional<int64_t> checked_element_count(const std::vector<int64_t>& dims) {
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0) return std::nullopt;
    auto next = checked_mul(count, d);
    if (!next) return std::nullopt;
    count = *next;
  }
  return count;
}

}  // namespace tts
