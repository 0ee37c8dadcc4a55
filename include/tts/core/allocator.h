// The process's heap policy, decided once at start (tts-train's main, and the benchmark programs
// that time what its commands run).
//
// libtorch allocates every CPU tensor with malloc. glibc serves a request above its mmap threshold
// (128 KiB until a large block is freed, then that block's size) with a fresh mmap, and returns a
// heap top above its trim threshold to the system: a network whose activations are a few MB each,
// allocated and freed every layer, then pays a page fault per 4 KiB page of every activation, every
// forward. Measured on HiFi-GAN's V2 generator (docs/benchmarks.md, "Vocoders: HiFi-GAN"): a third
// of generation time in the kernel's page-fault path.
#pragma once

#include <cstddef>
#include <string>

namespace tts {

// The thresholds keep_freed_memory applies.
struct AllocatorPolicy {
  size_t mmap_threshold = size_t{32} << 20;  // blocks from 32 MiB up are mmapped and unmapped
  size_t trim_threshold = size_t{64} << 20;  // a free heap top over 64 MiB goes back to the system
};

// Applies `policy` (glibc's mallopt) unless the environment's GLIBC_TUNABLES already sets a malloc
// tunable (the user's choice wins). Returns what it did, for the debug log: "mmap threshold ..."
// or why it left the heap as it was. A no-op returning the reason on other C libraries.
std::string keep_freed_memory(const AllocatorPolicy& policy = {});

}  // namespace tts
