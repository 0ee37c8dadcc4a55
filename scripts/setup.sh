#!/usr/bin/env bash
# Installs the Debian 12 packages tts-train needs, only those missing. A second run does nothing.
#   scripts/setup.sh [--torch debian|pip]
# --torch pip also installs PyTorch's wheel (pinned in scripts/lib/torch_env.sh) with TensorBoard into
# a virtual environment under .deps/ (ignored by git), reusing pip's download cache.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=lib/torch_env.sh
source "$root/scripts/lib/torch_env.sh"

packages=(
  build-essential cmake ninja-build pkg-config git
  libtorch-dev            # libtorch 1.13.1 (CPU, with c10d and Gloo)
  libgloo-dev             # headers that c10d's ProcessGroupGloo.hpp includes
  libyaml-cpp-dev libspdlog-dev libfmt-dev libcli11-dev
  libgtest-dev libgmock-dev
  libsndfile1-dev libsoxr-dev zlib1g-dev
  libfftw3-dev            # FFTW: the CPU STFT of feature extraction
  libcairo2-dev           # Cairo draws the plots (axes, text, PNG)
  fonts-dejavu-core       # the plots' font
  chromium                # headless, the report's tests render it in a real browser
  espeak-ng               # generates the small speech corpus of tests and the quickstart
  libespeak-ng-dev        # phonemes in process (text.frontend: phonemes)
  clang-format
  shellcheck              # CI checks the shell scripts
  clang libclang-rt-dev   # libFuzzer and the sanitizers of the fuzz harnesses (scripts/fuzz.sh)
  ccache                  # rebuilds of an unchanged tree (CI from a fresh clone) come from its cache
  libopenblas0-pthread    # the BLAS apt's Recommends bring with libtorch-dev: what Debian users run
)
if [ "$torch_flavor" = pip ]; then
  packages+=(python3-venv python3-pip)
fi

missing=()
for package in "${packages[@]}"; do
  # A comparison, not `dpkg-query | grep -q`: under pipefail that fails whenever grep closes the
  # pipe before dpkg-query is done writing.
  if [ "$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null)" != "install ok installed" ]; then
    missing+=("$package")
  fi
done

install_torch_wheel() {
  [ "$torch_flavor" = pip ] || return 0
  local python="$torch_venv/bin/python"
  if [ -x "$python" ] && "$python" -c "import torch, tensorboard, pocketsphinx, sys; sys.exit(torch.__version__.split('+')[0] != '$torch_pin')" 2>/dev/null; then
    echo "setup: PyTorch $torch_pin is installed in $torch_venv"
    return 0
  fi
  echo "setup: installing PyTorch $torch_pin (CUDA wheel, about 3 GB with its NVIDIA libraries), TensorBoard and pocketsphinx (evaluate --asr) into $torch_venv"
  python3 -m venv "$torch_venv"
  "$torch_venv/bin/pip" install -q --disable-pip-version-check "torch==$torch_pin" tensorboard pocketsphinx
}

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages are installed"
  install_torch_wheel
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
install_torch_wheel
