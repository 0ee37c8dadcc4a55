#include "tts/core/allocator.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace tts {

std::string keep_freed_memory(const AllocatorPolicy& policy) {
#if defined(__GLIBC__)
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables != nullptr && std::strstr(tunables, "glibc.malloc.") != nullptr) {
    return "heap policy left to GLIBC_TUNABLES";
  }
  // Setting either threshold turns off glibc's dynamic adjustment of both: set both.
  const bool ok = mallopt(M_MMAP_THRESHOLD, static_cast<int>(policy.mmap_threshold)) == 1 &&
                  mallopt(M_TRIM_THRESHOLD, static_cast<int>(policy.trim_threshold)) == 1;
  if (!ok) return "heap policy: mallopt refused the thresholds; glibc's defaults stay";
  return fmt::format("heap policy: mmap threshold {} MiB, trim threshold {} MiB",
                     policy.mmap_threshold >> 20, policy.trim_threshold >> 20);
#else
  (void)policy;
  return "heap policy: not glibc; the C library's defaults stay";
#endif
}

}  // namespace tts
