#include "tts/formats/json_reader.h"

#include <fmt/format.h>

#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/core/printable.h"

namespace tts::formats {
namespace {

class Parser {
 public:
  Parser(std::string_view text, const std::string& source, const JsonLimits& limits)
      : text_(text), source_(source), limits_(limits) {}

  JsonValue document() {
    if (static_cast<int64_t>(text_.size()) > limits_.max_bytes) {
      fail(fmt::format("{} bytes, more than the {} a settings file may have", text_.size(),
                       limits_.max_bytes));
    }
    // A byte order mark, as some editors write one.
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") position_ = 3;
    JsonValue value = parse_value(1);
    skip_space();
    if (position_ != text_.size()) fail("more text after the JSON value");
    return value;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(fmt::format("{} line {}: not valid JSON: {}", source_, line_, what));
  }

  void skip_space() {
    while (position_ < text_.size()) {
      const char c = text_[position_];
      if (c == '\n') {
        ++line_;
      } else if (c != ' ' && c != '\t' && c != '\r') {
        return;
      }
      ++position_;
    }
  }

  char peek() const { return position_ < text_.size() ? text_[position_] : '\0'; }

  bool consume(std::string_view word) {
    if (text_.substr(position_, word.size()) != word) return false;
    position_ += word.size();
    return true;
  }

  JsonValue parse_value(int depth) {
    skip_space();
    if (position_ >= text_.size()) fail("the text ends where a value should start");
    JsonValue value;
    value.line = line_;
    const char c = peek();
    if (c == '{' || c == '[') {
      if (depth > limits_.max_depth) {
        fail(fmt::format("lists and objects nest deeper than {} levels", limits_.max_depth));
      }
      ++position_;
      if (c == '{') {
        value.kind = JsonValue::Kind::kObject;
        parse_members(value, depth);
      } else {
        value.kind = JsonValue::Kind::kArray;
        parse_items(value, depth);
      }
    } else if (c == '"') {
      value.kind = JsonValue::Kind::kString;
      value.text = parse_string();
    } else if (consume("true")) {
      value.kind = JsonValue::Kind::kBool;
      value.boolean = true;
    } else if (consume("false")) {
      value.kind = JsonValue::Kind::kBool;
    } else if (consume("null")) {
      value.kind = JsonValue::Kind::kNull;
    } else {
      value.kind = JsonValue::Kind::kNumber;
      value.text = parse_number();
    }
    return value;
  }

  void parse_items(JsonValue& array, int depth) {
    skip_space();
    if (consume("]")) return;
    while (true) {
      array.items.push_back(parse_value(depth + 1));
      skip_space();
      if (consume("]")) return;
      if (!consume(",")) fail("expected ',' or ']' in a list");
    }
  }

  void parse_members(JsonValue& object, int depth) {
    skip_space();
    if (consume("}")) return;
    while (true) {
      skip_space();
      if (peek() != '"') fail("expected a key in double quotes");
      std::string key = parse_string();
      for (const auto& member : object.members) {
        if (member.first == key) fail(fmt::format("the key '{}' appears twice", printable(key)));
      }
      skip_space();
      if (!consume(":")) fail(fmt::format("expected ':' after the key '{}'", printable(key)));
      JsonValue value = parse_value(depth + 1);
      object.members.emplace_back(std::move(key), std::move(value));
      skip_space();
      if (consume("}")) return;
      if (!consume(",")) fail("expected ',' or '}' in an object");
    }
  }

  // Python's json module writes these for float('nan') and the infinities.
  std::string parse_number() {
    for (const char* word : {"NaN", "Infinity", "-Infinity"}) {
      if (consume(word)) return word;
    }
    const size_t start = position_;
    auto digits = [&] {
      const size_t from = position_;
      while (peek() >= '0' && peek() <= '9') ++position_;
      return position_ - from;
    };
    consume("-");
    if (peek() == '0') {
      ++position_;
    } else if (digits() == 0) {
      fail(fmt::format("unexpected '{}' where a value should start",
                       printable(std::string_view(&text_[start], 1))));
    }
    if (consume(".") && digits() == 0) fail("a number's fraction has no digits");
    if (peek() == 'e' || peek() == 'E') {
      ++position_;
      if (peek() == '+' || peek() == '-') ++position_;
      if (digits() == 0) fail("a number's exponent has no digits");
    }
    return std::string(text_.substr(start, position_ - start));
  }

  unsigned hex4() {
    if (position_ + 4 > text_.size()) fail("a \\u escape is cut short");
    unsigned value = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[position_++];
      value <<= 4;
      if (c >= '0' && c <= '9') {
        value |= static_cast<unsigned>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        value |= static_cast<unsigned>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        value |= static_cast<unsigned>(c - 'A' + 10);
      } else {
        fail("a \\u escape needs four hexadecimal digits");
      }
    }
    return value;
  }

  static void append_utf8(std::string& out, unsigned code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  std::string parse_string() {
    ++position_;  // the opening quote
    std::string out;
    while (true) {
      if (position_ >= text_.size()) fail("a string is not closed");
      const char c = text_[position_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) {
        fail("a control character inside a string (JSON writes it as an escape)");
      }
      if (c != '\\') {
        out += c;
        continue;
      }
      if (position_ >= text_.size()) fail("a string is not closed");
      const char e = text_[position_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          unsigned code = hex4();
          if (code >= 0xD800 && code <= 0xDBFF) {
            if (!consume("\\u")) fail("a lone UTF-16 surrogate in a \\u escape");
            const unsigned low = hex4();
            if (low < 0xDC00 || low > 0xDFFF) fail("a lone UTF-16 surrogate in a \\u escape");
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
          } else if (code >= 0xDC00 && code <= 0xDFFF) {
            fail("a lone UTF-16 surrogate in a \\u escape");
          }
          append_utf8(out, code);
          break;
        }
        default:
          fail(fmt::format("unknown escape '\\{}' in a string",
                           printable(std::string_view(&text_[position_ - 1], 1))));
      }
    }
  }

  std::string_view text_;
  const std::string& source_;
  const JsonLimits& limits_;
  size_t position_ = 0;
  int64_t line_ = 1;
};

}  // namespace

const JsonValue* JsonValue::find(std::string_view key) const {
  for (const auto& member : members) {
    if (member.first == key) return &member.second;
  }
  return nullptr;
}

const char* JsonValue::kind_name() const {
  switch (kind) {
    case Kind::kNull:
      return "null";
    case Kind::kBool:
      return "a boolean";
    case Kind::kNumber:
      return "a number";
    case Kind::kString:
      return "a string";
    case Kind::kArray:
      return "a list";
    case Kind::kObject:
      return "an object";
  }
  return "a value";
}

JsonValue parse_json(std::string_view text, const std::string& source, const JsonLimits& limits) {
  return Parser(text, source, limits).document();
}

JsonValue read_json_file(const std::string& path, const JsonLimits& limits) {
  FileDescriptor fd = open_regular_file_for_read(path);
  const int64_t size = file_size(fd, path);
  TTS_CHECK(size <= limits.max_bytes,
            "{}: {} bytes, more than the {} a settings file may have (the peers' config.json and "
            "hparams.json have one to a few kB)",
            path, size, limits.max_bytes);
  return parse_json(read_at(fd, path, 0, size), path, limits);
}

}  // namespace tts::formats
