#!/usr/bin/env bash
# Configures and builds tts-train (Release, all cores) into BUILD_DIR (default: build/).
# Extra arguments go to cmake, e.g. -DTorch_DIR=... for a CUDA libtorch.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build_dir="${BUILD_DIR:-$root/build}"
generator=()
# Ninja schedules the many torch-heavy compiles better than make (objects of the tests compile
# while the library links); a build folder keeps the generator it was first configured with.
if [ ! -f "$build_dir/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1; then
  generator=(-G Ninja)
fi
cmake -S "$root" -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$build_dir" -j "$(nproc)"
