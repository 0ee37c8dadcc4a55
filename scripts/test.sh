#!/usr/bin/env bash
# Installs what is missing, builds, checks formatting and runs every test.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build_dir="${BUILD_DIR:-$root/build}"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
"$root/scripts/format.sh" --check
cd "$build_dir"
# Test executables run in parallel, the tests of one executable one at a time (they may share
# fixtures on disk; see tests/CMakeLists.txt).
ctest --output-on-failure -j "$(nproc)"
