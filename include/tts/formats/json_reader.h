// JSON read as JSON: the peers' settings files (jik876/hifi-gan's config.json, r9y9/
// wavenet_vocoder's hparams.json) are small objects of numbers, strings and short lists. The
// reader is bounded: the file's size, the nesting depth (the parser recurses once per level, and
// so does freeing a value) and every string are checked while reading; nothing is re-emitted, and
// duplicate keys are refused (readers differ on which one wins).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tts::formats {

struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  // kNumber: the number as written (JSON's grammar, or Python's NaN, Infinity, -Infinity);
  // kString: the decoded UTF-8 text.
  std::string text;
  std::vector<JsonValue> items;                            // kArray
  std::vector<std::pair<std::string, JsonValue>> members;  // kObject, in the file's order
  int64_t line = 0;                                        // where the value starts, from 1

  // The member `key` of an object, or nullptr (also for any other kind).
  const JsonValue* find(std::string_view key) const;
  // "null", "a boolean", "a number", "a string", "a list", "an object".
  const char* kind_name() const;
};

struct JsonLimits {
  int64_t max_bytes = int64_t{1} << 20;  // the peers' files have one to a few kB
  int max_depth = 16;                    // theirs nest two or three levels
};

// Parses `text`, one JSON value and nothing after it but white space. Throws tts::Error
// "SOURCE line L: ..." for anything else, for text past the limits, for control characters inside
// strings, for invalid escapes and duplicate keys.
JsonValue parse_json(std::string_view text, const std::string& source,
                     const JsonLimits& limits = {});

// Reads `path` (a regular file, fs.h's open_regular_file_for_read), refusing it past
// limits.max_bytes before reading it, then parses it.
JsonValue read_json_file(const std::string& path, const JsonLimits& limits = {});

}  // namespace tts::formats
