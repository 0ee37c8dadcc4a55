#!/usr/bin/env bash
# Configures and builds tts-train (Release, all cores).
#   scripts/build.sh [--torch debian|pip] [--target NAME]... [extra cmake arguments]
# --target builds only NAME (repeatable: tts-train, test_train_checkpoint, ...); default: all.
# --torch debian (default): Debian's libtorch 1.13 into build/; --torch pip: the PyTorch wheel that
# `scripts/setup.sh --torch pip` installed, CUDA and NCCL code included, into build-pip/.
# BUILD_DIR overrides the folder. Your own libtorch: BUILD_DIR=build-x scripts/build.sh
# -DTorch_DIR=/path/to/libtorch/share/cmake/Torch (README: "Building against your own libtorch").
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=lib/torch_env.sh
source "$root/scripts/lib/torch_env.sh"
build_dir="${BUILD_DIR:-$default_build_dir}"
# --target NAME (repeatable) picks what to build; the other arguments go to cmake.
targets=()
cmake_extra=()
set -- ${args[@]+"${args[@]}"}
while [ $# -gt 0 ]; do
  case "$1" in
    --target) targets+=("${2:?--target needs a target name, e.g. tts-train}"); shift 2 ;;
    --target=*) targets+=("${1#--target=}"); shift ;;
    *) cmake_extra+=("$1"); shift ;;
  esac
done
cmake_args=(-DCMAKE_BUILD_TYPE=Release)
# Ninja schedules the many torch-heavy compiles better than make (objects of the tests compile
# while the library links); a build folder keeps the generator it was first configured with.
if [ ! -f "$build_dir/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1; then
  cmake_args+=(-G Ninja)
fi
if command -v ccache >/dev/null 2>&1 && [ "${TTS_CCACHE:-1}" = 1 ]; then
  # Paths relative to the checkout, so that another clone (CI's) hits the same cache entries;
  # the sloppiness lets the precompiled torch header be cached.
  export CCACHE_BASEDIR="$root"
  export CCACHE_SLOPPINESS="${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}"
  export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-8G}"
  cmake_args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
if [ "$torch_flavor" = pip ]; then
  python="$torch_venv/bin/python"
  if [ ! -x "$python" ]; then
    echo "build: no PyTorch wheel in $torch_venv: run scripts/setup.sh --torch pip first" >&2
    exit 1
  fi
  torch_cmake="$("$python" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')"
  # The NCCL version torch was built with is the one its wheel pins (nvidia-nccl-cu13==X.Y.Z);
  # CMake checks nccl.h against it (cmake/torch.cmake).
  nccl_version="$("$python" -c "import importlib.metadata as m, re; print(next((re.search(r'==([0-9.]+)', r).group(1) for r in m.requires('torch') or [] if r.startswith('nvidia-nccl')), ''))")"
  cmake_args+=("-DCMAKE_PREFIX_PATH=$torch_cmake" "-DTTS_TORCH_NCCL_VERSION=$nccl_version")
  if [ -d /usr/local/cuda ]; then
    cmake_args+=(-DCUDAToolkit_ROOT=/usr/local/cuda -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
  fi
fi
cmake -S "$root" -B "$build_dir" "${cmake_args[@]}" ${cmake_extra[@]+"${cmake_extra[@]}"}
cmake --build "$build_dir" -j "$(nproc)" ${targets[@]+--target "${targets[@]}"}
