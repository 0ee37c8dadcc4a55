#!/usr/bin/env bash
# Installs the Debian 12 packages tts-train needs, only those missing. A second run does nothing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libtorch-dev            # libtorch 1.13.1 (CPU, with c10d and Gloo)
  libgloo-dev             # headers that c10d's ProcessGroupGloo.hpp includes
  libyaml-cpp-dev libspdlog-dev libfmt-dev libcli11-dev
  libgtest-dev libgmock-dev
  libsndfile1-dev libsoxr-dev zlib1g-dev
  libfftw3-dev            # FFTW: the CPU STFT of feature extraction
  espeak-ng               # generates the small speech corpus of tests and the quickstart
  clang-format
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages are installed"
  exit 0
fi

echo "setup: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=sudo
  else
    echo "setup: these packages are missing and installing them needs root: ${missing[*]}" >&2
    echo "setup: run this script as root, or: apt-get install ${missing[*]}" >&2
    exit 1
  fi
else
  SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
