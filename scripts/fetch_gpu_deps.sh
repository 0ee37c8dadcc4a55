#!/usr/bin/env bash
# Fills .devdeps/ (ignored by git) with what a GPU machine needs to build tts-train and lacks, so
# that the folder can travel with the working tree to that machine. Run it HERE, on a Debian 12
# machine with apt; scripts/gpu_build.sh THERE unpacks and uses it (scripts/gpu_check.sh runs that).
#
#   scripts/fetch_gpu_deps.sh [more Debian packages]
#
# The GPU machine is assumed to have CUDA, cuDNN, NCCL, CMake, Ninja and a CUDA build of PyTorch
# (2.11.0+cu130, whose libtorch tts-train builds against), and no network. What it lacks, and what
# this script downloads into .devdeps/debs/ as Debian 12 packages (.deb files, `apt-get download`:
# nothing is installed here): yaml-cpp, spdlog, fmt, GoogleTest, CLI11, libsndfile with the codec
# libraries it links, soxr, FFTW, zlib's headers and pkgconf, each as the development package and
# its runtime library, and Cairo (the plots) with the -dev packages its cairo.pc requires and their
# runtime libraries. Extra package names on the command line are added to the list; run again to
# download everything afresh.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
debs="$root/.devdeps/debs"

packages=(
  libyaml-cpp-dev libyaml-cpp0.7           # config parsing
  libspdlog-dev libspdlog1.10              # logging
  libfmt-dev libfmt9                       # formatting
  libgtest-dev libgmock-dev googletest     # the test suite
  libcli11-dev                             # command line (header-only)
  libsndfile1-dev libsndfile1              # audio files, and the codecs libsndfile links:
  libflac12 libogg0 libvorbis0a libvorbisenc2 libopus0 libmpg123-0 libmp3lame0
  libsoxr-dev libsoxr0                     # resampling
  libfftw3-dev libfftw3-single3 libfftw3-double3  # the CPU STFT
  zlib1g-dev                               # zlib (CMake's find_package(ZLIB))
  libespeak-ng-dev libespeak-ng1 espeak-ng-data libpcaudio0 libsonic0  # phonemes
  pkgconf pkgconf-bin libpkgconf3          # pkg-config, which finds sndfile, soxr, FFTW, Cairo
  # Cairo (plots and PNG decoding) and what its cairo.pc requires, -dev and runtime
  libcairo2-dev libcairo2 libglib2.0-dev libpcre2-dev libffi-dev libpixman-1-dev libpixman-1-0
  libfontconfig-dev libfontconfig1 libexpat1-dev libfreetype-dev libfreetype6 libbrotli-dev
  libbrotli1 libpng-dev libpng16-16 libx11-dev libx11-6 libxext-dev libxext6 libxrender-dev
  libxrender1 libxcb1-dev libxcb1 libxcb-render0-dev libxcb-render0 libxcb-shm0-dev libxcb-shm0
  libxau-dev libxau6 libxdmcp-dev libxdmcp6 x11proto-dev libbsd0 libmd0
)
packages+=("$@")

command -v apt-get >/dev/null || { echo "fetch_gpu_deps: needs apt-get (Debian 12)" >&2; exit 1; }
if ! compgen -G '/var/lib/apt/lists/*Packages*' >/dev/null; then
  echo "fetch_gpu_deps: apt has no package lists; updating them (needs root)" >&2
  apt-get update -qq
fi
rm -rf "$debs"
mkdir -p "$debs"
# apt-get download writes into the current folder.
(cd "$debs" && apt-get download -q "${packages[@]}")
echo "fetch_gpu_deps: ${#packages[@]} packages, $(du -sh "$debs" | cut -f1), in $debs"
