# Finding libtorch and what its CUDA build needs, for CMakeLists.txt. Sets TTS_WITH_CUDA and, with
# CUDA, the imported target tts::nccl_headers.

# TorchConfig.cmake looks for its own libraries (libtorch.so, libc10.so) with find_library, whose
# default search visits the system's library folders before the PATHS it gives. On a machine with
# Debian's libtorch-dev, a PyTorch wheel's or a libtorch zip's config then picks Debian's 1.13
# libc10.so beside its own 2.x headers: a build that links and crashes. Any library that exists
# under the config's own prefix is taken from there.
function(tts_take_torch_libraries_from_its_prefix)
  set(fixed)
  set(libraries)
  foreach(library IN LISTS TORCH_LIBRARIES)
    if(IS_ABSOLUTE "${library}" AND NOT library MATCHES "^${TORCH_INSTALL_PREFIX}/")
      get_filename_component(name "${library}" NAME)
      if(EXISTS "${TORCH_INSTALL_PREFIX}/lib/${name}")
        list(APPEND fixed "${library} -> ${TORCH_INSTALL_PREFIX}/lib/${name}")
        set(library "${TORCH_INSTALL_PREFIX}/lib/${name}")
      endif()
    endif()
    list(APPEND libraries "${library}")
  endforeach()
  foreach(line IN LISTS fixed)
    message(STATUS "tts-train: torch library taken from torch's own prefix: ${line}")
  endforeach()
  set(TORCH_LIBRARIES "${libraries}" PARENT_SCOPE)
endfunction()

# ProcessGroupNCCL.hpp includes <nccl.h>, which torch's CMake does not export, and embeds NCCL's
# ncclConfig_t in ProcessGroupNCCL::Options: compiled against another nccl.h than torch was, the
# Options object has another layout than libtorch_cuda's (silent heap corruption). So the header
# must be found (NCCL_INCLUDE_DIR, the nvidia-nccl wheel beside torch, the CUDA toolkit) and its
# version must equal torch's (TTS_TORCH_NCCL_VERSION, which scripts/build.sh reads from the wheel's
# requirements; at run time the group also compares the loaded libnccl with the header).
function(tts_find_nccl_headers)
  find_path(NCCL_INCLUDE_DIR nccl.h
    HINTS "${TORCH_INSTALL_PREFIX}/../nvidia/nccl/include" ${CUDAToolkit_INCLUDE_DIRS}
          /usr/local/cuda/include
    DOC "folder of the nccl.h that libtorch was built with")
  if(NOT NCCL_INCLUDE_DIR)
    message(FATAL_ERROR
      "tts-train: libtorch ${Torch_VERSION} has CUDA, but nccl.h was not found (torch's CMake does "
      "not export it). Install the NCCL that torch was built with (PyTorch's wheels depend on "
      "nvidia-nccl-cu1x: pip install it; or the CUDA toolkit's NCCL) and pass "
      "-DNCCL_INCLUDE_DIR=/path/to/include, or build without CUDA support against a CPU libtorch.")
  endif()
  file(STRINGS "${NCCL_INCLUDE_DIR}/nccl.h" version_lines REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) ")
  set(version)
  foreach(part MAJOR MINOR PATCH)
    string(REGEX MATCH "NCCL_${part} ([0-9]+)" unused "${version_lines}")
    list(APPEND version "${CMAKE_MATCH_1}")
  endforeach()
  list(JOIN version "." version)
  if(TTS_TORCH_NCCL_VERSION AND NOT version VERSION_EQUAL TTS_TORCH_NCCL_VERSION)
    message(FATAL_ERROR
      "tts-train: ${NCCL_INCLUDE_DIR}/nccl.h is NCCL ${version}, but libtorch ${Torch_VERSION} was "
      "built with NCCL ${TTS_TORCH_NCCL_VERSION}: ProcessGroupNCCL::Options would have another "
      "layout than libtorch's. Point -DNCCL_INCLUDE_DIR at NCCL ${TTS_TORCH_NCCL_VERSION}'s headers "
      "(pip install nvidia-nccl-cu13==${TTS_TORCH_NCCL_VERSION} gives them).")
  elseif(NOT TTS_TORCH_NCCL_VERSION)
    message(STATUS "tts-train: the NCCL version libtorch was built with is unknown (pass "
                   "-DTTS_TORCH_NCCL_VERSION=X.Y.Z to check it); the NCCL group compares the "
                   "loaded libnccl with nccl.h ${version} when it starts")
  endif()
  message(STATUS "tts-train: nccl.h ${version} from ${NCCL_INCLUDE_DIR}")
  add_library(tts_nccl_headers INTERFACE IMPORTED GLOBAL)
  set_target_properties(tts_nccl_headers PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
  add_library(tts::nccl_headers ALIAS tts_nccl_headers)
endfunction()

# PyTorch's wheels ship their own fmt (12) in torch/include. Torch's include folders come before
# /usr/include, so spdlog's `#include <fmt/...>` would see fmt 12 while libspdlog and libfmt were
# built against the system's fmt 9: a mismatch that fails to link, or links and misbehaves.
# The system fmt's own folder is put first, through a folder that holds only fmt (putting
# /usr/include itself first is ignored by the compiler, which keeps system folders last).
function(tts_system_fmt_first target)
  get_target_property(fmt_includes fmt::fmt INTERFACE_INCLUDE_DIRECTORIES)
  find_path(TTS_SYSTEM_FMT_DIR fmt/core.h HINTS ${fmt_includes} NO_CMAKE_PATH NO_CMAKE_ENVIRONMENT_PATH)
  set(torch_fmt)
  foreach(dir IN LISTS TORCH_INCLUDE_DIRS)
    if(EXISTS "${dir}/fmt/core.h" AND NOT dir STREQUAL TTS_SYSTEM_FMT_DIR)
      set(torch_fmt "${dir}")
    endif()
  endforeach()
  if(NOT torch_fmt)
    return()  # Debian's libtorch: its include folder is the system's
  endif()
  if(NOT TTS_SYSTEM_FMT_DIR)
    message(FATAL_ERROR "tts-train: torch's include folder ${torch_fmt} has its own fmt, and the fmt "
                        "that spdlog was built with was not found apart from it")
  endif()
  set(only_fmt "${CMAKE_BINARY_DIR}/system-fmt-include")
  file(MAKE_DIRECTORY "${only_fmt}")
  file(CREATE_LINK "${TTS_SYSTEM_FMT_DIR}/fmt" "${only_fmt}/fmt" SYMBOLIC)
  target_include_directories(${target} SYSTEM BEFORE PUBLIC "${only_fmt}")
  message(STATUS "tts-train: torch ships fmt in ${torch_fmt}; ${TTS_SYSTEM_FMT_DIR}/fmt comes first")
endfunction()

# PyTorch's wheels are built with a newer GCC toolset whose libtorch.so exports its own copy of
# std::filesystem (remove_all, read_symlink, ...). The dynamic linker binds a program's calls to
# the first library in its list that defines the symbol, and g++ names libstdc++ last: calls of
# our code went to libtorch's copy, and fs::remove_all crashed (a jump to address 0). Naming the
# system's libstdc++ first in every binary that links `target` keeps the C++ runtime the system's.
function(tts_system_libstdcxx_first target)
  target_link_options(${target} INTERFACE "LINKER:--push-state,--no-as-needed,-lstdc++,--pop-state")
endfunction()

find_package(Torch REQUIRED)
tts_take_torch_libraries_from_its_prefix()

# CUDA/NCCL code is compiled only where the libtorch we found was built with CUDA.
set(TTS_WITH_CUDA OFF)
if(TARGET torch_cuda OR TORCH_CUDA_LIBRARIES OR CUDA_FOUND)
  set(TTS_WITH_CUDA ON)
  tts_find_nccl_headers()
endif()
message(STATUS "tts-train: libtorch ${Torch_VERSION} from ${TORCH_INSTALL_PREFIX}, CUDA support: ${TTS_WITH_CUDA}")
