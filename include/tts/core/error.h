// The one error type of tts-train. Every user-facing failure is thrown as tts::Error (runtime
// failure, exit code 1) or tts::UsageError (bad command line or config, exit code 2); main()
// catches it and prints the message alone, no stack trace. Messages say what was expected, what
// was found, where (file, line, key, utterance id) and the fix.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace tts {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
  // Process exit code for this kind of error.
  virtual int exit_code() const { return 1; }
};

// A usage or configuration error: the command line or a config file is wrong.
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& message) : Error(message) {}
  int exit_code() const override { return 2; }
};

}  // namespace tts

// Throws tts::Error with a fmt-formatted message when `cond` is false.
#define TTS_CHECK(cond, ...)                          \
  do {                                                \
    if (!(cond)) {                                    \
      throw ::tts::Error(::fmt::format(__VA_ARGS__)); \
    }                                                 \
  } while (false)

// Throws tts::UsageError with a fmt-formatted message when `cond` is false.
#define TTS_USAGE_CHECK(cond, ...)                         \
  do {                                                     \
    if (!(cond)) {                                         \
      throw ::tts::UsageError(::fmt::format(__VA_ARGS__)); \
    }                                                      \
  } while (false)
