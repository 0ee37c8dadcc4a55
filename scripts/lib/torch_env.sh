# shellcheck shell=bash
# Sourced by scripts/setup.sh, build.sh and test.sh: which libtorch to build against.
#   --torch debian  Debian's libtorch-dev 1.13.1 (CPU only), build folder build/ (the default)
#   --torch pip     libtorch 2.11.0 from PyTorch's PyPI wheel (a CUDA build: our CUDA and NCCL code is
#                   compiled and linked; without a GPU every test runs on the CPU), build folder
#                   build-pip/, the wheel in a virtual environment under .deps/ (ignored by git)
# TTS_TORCH sets the default. Sets: torch_flavor, default_build_dir, torch_venv, torch_pin, args
# (the arguments that were not --torch). Reads $root, which the sourcing script sets.
# shellcheck disable=SC2154,SC2034  # root comes from, and the variables set go to, that script
torch_pin="2.11.0"  # the PyTorch of the GPU machine scripts/gpu_check.sh targets (2.11.0+cu130)
torch_flavor="${TTS_TORCH:-debian}"
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --torch) torch_flavor="${2:-}"; shift 2 || { echo "--torch needs a value: debian or pip" >&2; exit 2; } ;;
    --torch=*) torch_flavor="${1#--torch=}"; shift ;;
    *) args+=("$1"); shift ;;
  esac
done
case "$torch_flavor" in
  debian) default_build_dir="$root/build" ;;
  pip) default_build_dir="$root/build-pip" ;;
  *) echo "--torch $torch_flavor: expected debian (Debian's libtorch 1.13) or pip (PyTorch $torch_pin from PyPI)" >&2; exit 2 ;;
esac
torch_venv="${TTS_TORCH_VENV:-$root/.deps/torch-$torch_pin}"
