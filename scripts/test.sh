#!/usr/bin/env bash
# Installs what is missing, builds, checks formatting and runs every test.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build_dir="${BUILD_DIR:-$root/build}"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
"$root/scripts/format.sh" --check
cd "$build_dir"
# One test at a time: the tests of a suite share fixtures on disk, and several run the real
# multi-process trainer, which wants the cores to itself.
ctest --output-on-failure
