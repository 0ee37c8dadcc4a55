// Where the tests find the project, their data, the built CLI and their scratch folder.
//
// Test files read these as TTS_SOURCE_DIR, TTS_TEST_DATA_DIR, TTS_CLI_PATH and TTS_TEST_TMP_DIR,
// macros that read the environment variables of the same names (tests/CMakeLists.txt). The paths
// of this checkout and build are compiled into this one small file only, so that every test file
// compiles to the same object in every clone and ccache serves a fresh clone (CI) from the cache.
// The variables are set here, before any test file's static initializers run (a constructor of
// high priority), unless the environment already sets them, and the scratch folder is created
// (a process that passed removes it again: scratch_cleanup.cpp).
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace {

bool scratch_chosen_here = false;

std::string executable_name() {
  char buffer[4096];
  const ssize_t n = readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  if (n <= 0) return "test";
  const std::string path(buffer, static_cast<size_t>(n));
  return path.substr(path.find_last_of('/') + 1);
}

__attribute__((constructor(101))) void set_test_environment() {
  setenv("TTS_SOURCE_DIR", TTS_SOURCE_DIR_VALUE, 0);
  setenv("TTS_TEST_DATA_DIR", TTS_TEST_DATA_DIR_VALUE, 0);
  setenv("TTS_CLI_PATH", TTS_CLI_PATH_VALUE, 0);
  // A folder the environment names may be shared: only one chosen here is removed after a pass.
  scratch_chosen_here = getenv("TTS_TEST_TMP_DIR") == nullptr;
  setenv("TTS_TEST_TMP_DIR", (std::string(TTS_TEST_TMP_ROOT) + "/" + executable_name()).c_str(), 0);
  std::error_code ignored;  // a folder that cannot be made fails the tests that write there
  std::filesystem::create_directories(getenv("TTS_TEST_TMP_DIR"), ignored);
}

}  // namespace

namespace tts::test {

bool scratch_folder_is_ours() { return scratch_chosen_here; }

}  // namespace tts::test
