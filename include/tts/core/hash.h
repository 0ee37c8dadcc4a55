// Stable, well-mixed hashes for choices that must not depend on the order of work, the number of
// threads or the rank (the train/validation split, a training window's position).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tts {

// splitmix64's finalizer: a well-mixed 64-bit hash of `x`.
inline uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// lowbias32 (Chris Wellons' hash prospector): a bijective, well-mixed 32-bit hash.
inline uint32_t mix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  return x ^ (x >> 16);
}

// A hash of `size` bytes at `data` under `seed` (FNV-1a, then mixed).
inline uint64_t hash_bytes(const void* data, size_t size, int64_t seed) {
  uint64_t hash = 0xCBF29CE484222325ULL;
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) hash = (hash ^ bytes[i]) * 0x100000001B3ULL;
  return mix64(hash ^ mix64(static_cast<uint64_t>(seed)));
}

// A hash of the string `id` under `seed`.
inline uint64_t hash_id(const std::string& id, int64_t seed) {
  return hash_bytes(id.data(), id.size(), seed);
}

// An utterance's 32-bit key, in [0, 2^32), from its id alone (its keyed dropout masks' root,
// models/keyed_dropout.h).
inline int64_t utterance_key(const std::string& id) {
  const uint64_t h = hash_id(id, 0);
  return mix32(static_cast<uint32_t>(h) ^ mix32(static_cast<uint32_t>(h >> 32)));
}

}  // namespace tts
