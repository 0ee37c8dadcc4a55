// What every harness shares: the readers under test take a path, so each input is written to a
// file of this process's own (in /dev/shm when there is one: no disk I/O per run), and the one
// outcome besides success that is allowed is a tts::Error. Anything else (another exception, a
// sanitizer report, a signal, running out of libFuzzer's memory or time limits) is a finding.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

#include "tts/core/error.h"

namespace tts::fuzz {

inline std::string input_path(const char* extension) {
  static const std::string dir = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
  return dir + "/tts-fuzz-" + std::to_string(getpid()) + extension;
}

inline void write_bytes(const std::string& path, const uint8_t* data, size_t size) {
  FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, file) != size) std::abort();
  std::fclose(file);
}

inline std::string write_input(const uint8_t* data, size_t size, const char* extension) {
  std::string path = input_path(extension);
  write_bytes(path, data, size);
  return path;
}

// Runs `read`; a tts::Error is the expected refusal of a bad input.
template <class Fn>
void expect_success_or_error(Fn read) {
  try {
    read();
  } catch (const tts::Error&) {
  }
}

}  // namespace tts::fuzz
