#!/usr/bin/env bash
# Installs what is missing, builds, checks formatting and runs every test.
#   scripts/test.sh [--torch debian|pip] [ctest arguments]
# --torch debian (default): Debian's libtorch 1.13 in build/; --torch pip: PyTorch 2.11's CUDA
# libtorch in build-pip/ (CUDA and NCCL code compiled and linked; on a machine without a GPU every
# test runs on the CPU and the GPU-only ones skip, saying why).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=lib/torch_env.sh
source "$root/scripts/lib/torch_env.sh"
build_dir="${BUILD_DIR:-$default_build_dir}"
"$root/scripts/setup.sh" --torch "$torch_flavor"
BUILD_DIR="$build_dir" "$root/scripts/build.sh" --torch "$torch_flavor"
"$root/scripts/format.sh" --check
cd "$build_dir"
# Test executables run in parallel, the tests of one executable one at a time (they may share
# fixtures on disk; see tests/CMakeLists.txt).
ctest --output-on-failure -j "$(nproc)" ${args[@]+"${args[@]}"}
