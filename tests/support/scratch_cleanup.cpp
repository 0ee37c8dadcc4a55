// A test process that passed removes its scratch folder (TTS_TEST_TMP_DIR) when it ends: the
// suite writes full-size checkpoints (a HiFi-GAN V1 one is 270 MB), and two builds' leftovers
// would otherwise fill a CI machine's disk. A process with a failed test keeps its folder to be
// looked at, and TTS_KEEP_TEST_TMP=1 keeps every folder (the report tests' screenshots, say).
// A TTS_TEST_TMP_DIR set in the environment is never removed: it may be shared.
//
// ctest runs each test as its own process (tests/CMakeLists.txt), so a folder lives as long as
// one test; a test executable run by hand cleans up once, after all its tests.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <system_error>

namespace tts::test {
bool scratch_folder_is_ours();  // environment.cpp
}  // namespace tts::test

namespace {

class RemoveScratchOfAPassedProcess : public testing::EmptyTestEventListener {
  void OnTestProgramEnd(const testing::UnitTest& unit_test) override {
    // Listing the tests (ctest's discovery at build time) runs none: nothing of ours to remove.
    const bool passed = unit_test.test_to_run_count() > 0 && unit_test.Passed();
    const char* keep = getenv("TTS_KEEP_TEST_TMP");
    const bool kept = keep != nullptr && keep[0] != '\0' && std::strcmp(keep, "0") != 0;
    if (!passed || kept || !tts::test::scratch_folder_is_ours()) return;
    std::error_code ignored;  // a folder that cannot be removed costs disk, not the test's result
    std::filesystem::remove_all(getenv("TTS_TEST_TMP_DIR"), ignored);
  }
};

// Installed before main() runs RUN_ALL_TESTS; gtest owns the listener from here on.
const bool installed = [] {
  testing::UnitTest::GetInstance()->listeners().Append(new RemoveScratchOfAPassedProcess);
  return true;
}();

}  // namespace
