#!/usr/bin/env bash
# Builds tts-train on a GPU machine against the CUDA libtorch of the machine's PyTorch, into
# build-gpu/ (Release, Ninja), with the libraries the machine lacks taken from .devdeps/debs/
# (filled beforehand by scripts/fetch_gpu_deps.sh on a Debian machine, carried along).
#
#   scripts/gpu_build.sh [extra cmake arguments]
#
# Every .deb in .devdeps/debs/ is unpacked (dpkg -x, not installed) under DEPS_PREFIX (default
# /opt/deps, never /); pkg-config and CMake look there, and NCCL's header comes from PyTorch's
# nvidia-nccl wheel when installed (torch's CMake files do not export nccl.h). The last line
# printed is an `export LD_LIBRARY_PATH=...` that the binaries need: scripts/gpu_check.sh reads it
# from the log, or eval it in the same shell before running build-gpu/tts-train.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
prefix="${DEPS_PREFIX:-/opt/deps}"
python="${PYTHON:-python3}"

compgen -G '.devdeps/debs/*.deb' >/dev/null ||
  { echo "gpu_build: no .devdeps/debs/*.deb; run scripts/fetch_gpu_deps.sh first and carry .devdeps" >&2; exit 1; }
mkdir -p "$prefix"
for deb in .devdeps/debs/*.deb; do dpkg -x "$deb" "$prefix"; done

torch_cmake="$("$python" -c 'import torch; print(torch.utils.cmake_prefix_path)')"
torch_lib="$("$python" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')"
nccl_include="$("$python" -c 'import os, nvidia.nccl as m; print(os.path.join(list(m.__path__)[0], "include"))' 2>/dev/null || true)"
export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu:$torch_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
"$python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cxx11abi", torch._C._GLIBCXX_USE_CXX11_ABI)'

# The carried .pc files say prefix=/usr: the sysroot puts them under $prefix.
export PKG_CONFIG_PATH="$prefix/usr/lib/x86_64-linux-gnu/pkgconfig:$prefix/usr/share/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export PKG_CONFIG_SYSROOT_DIR="$prefix"
cmake_args=(-S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release
  "-DCMAKE_PREFIX_PATH=$torch_cmake;$prefix/usr" "-DPKG_CONFIG_EXECUTABLE=$prefix/usr/bin/pkgconf")
[ -z "$nccl_include" ] || cmake_args+=("-DNCCL_INCLUDE_DIR=$nccl_include")
cmake "${cmake_args[@]}" "$@"
cmake --build build-gpu -j "$(nproc)"
echo "export LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
