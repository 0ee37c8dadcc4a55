// The message of the tts::Error that `work` throws, or "" when it throws none: what a test of a
// refusal checks (the file, line, key and fix it names).
#pragma once

#include <string>

#include "tts/core/error.h"

namespace tts::test {

template <class Work>
std::string error_of(Work&& work) {
  try {
    work();
  } catch (const tts::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace tts::test
