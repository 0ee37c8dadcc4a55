// Scratch folders of a test executable: each lives under its own TTS_TEST_TMP_DIR
// (tests/support/environment.cpp), so executables running in parallel never share one.
#pragma once

#include <filesystem>
#include <string>

namespace tts::test {

// `name` under this executable's scratch folder, emptied and created.
inline std::string fresh_dir(const std::string& name) {
  std::string dir = std::string(TTS_TEST_TMP_DIR) + "/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace tts::test
