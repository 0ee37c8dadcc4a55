// The heap policy of tts/core/allocator.h: blocks of a few MB (a vocoder's activations) come from
// the heap and go back to it, instead of an mmap and a page fault per page each time; a user's
// GLIBC_TUNABLES wins.
#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>
#include <string>

#include "tts/core/allocator.h"

namespace {

TEST(Allocator, BlocksOfAFewMegabytesComeFromTheHeapAfterThePolicy) {
  ::unsetenv("GLIBC_TUNABLES");
  const std::string applied = tts::keep_freed_memory();
  EXPECT_EQ(applied, "heap policy: mmap threshold 32 MiB, trim threshold 64 MiB");
  const size_t mmapped_before = mallinfo2().hblks;
  void* block = std::malloc(size_t{6} << 20);  // above glibc's default 128 KiB threshold
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(mallinfo2().hblks, mmapped_before) << "a 6 MiB block was mmapped";
  std::free(block);
  void* large = std::malloc(size_t{40} << 20);  // above the policy's threshold: mmapped
  ASSERT_NE(large, nullptr);
  EXPECT_EQ(mallinfo2().hblks, mmapped_before + 1);
  std::free(large);
}

TEST(Allocator, AUsersMallocTunablesAreLeftAsTheyAre) {
  ::setenv("GLIBC_TUNABLES", "glibc.malloc.arena_max=2", 1);
  EXPECT_EQ(tts::keep_freed_memory(), "heap policy left to GLIBC_TUNABLES");
  ::setenv("GLIBC_TUNABLES", "glibc.rtld.optional_static_tls=1024", 1);
  EXPECT_NE(tts::keep_freed_memory().find("mmap threshold"), std::string::npos);
  ::unsetenv("GLIBC_TUNABLES");
}

}  // namespace
