#!/usr/bin/env bash
# Configures and builds tts-train (Release, all cores) into BUILD_DIR (default: build/).
# Extra arguments go to cmake, e.g. -DTorch_DIR=... for a CUDA libtorch.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build_dir="${BUILD_DIR:-$root/build}"
cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$build_dir" -j "$(nproc)"
