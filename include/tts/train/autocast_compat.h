// Every difference between the libtorch versions tts-train builds against (1.13, 2.x) in
// libtorch's autocast state, in one place (train/precision.h, and the autocast policy of the
// families' own autograd nodes). The optimizers' differences are checkpoint/optimizer_compat.h's.
//
// Autocast:
// 1.13: one pair of functions per device type: is_cpu_enabled / set_cpu_enabled /
//       get_autocast_cpu_dtype / set_autocast_cpu_dtype for the CPU, is_enabled / set_enabled /
//       get_autocast_gpu_dtype / set_autocast_gpu_dtype for CUDA.
// 2.4+: the same state behind one function per operation, taking the device type
//       (is_autocast_enabled(type), ...); the per-device names remain as deprecated wrappers.
// In both, increment_nesting / decrement_nesting count the open autocast regions and clear_cache
// drops the casts of parameters kept while one is open, and the dispatch keys of autocast are
// c10::autocast_dispatch_keyset.
#pragma once

#include <ATen/autocast_mode.h>
#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>
#include <torch/version.h>

#include <string>

#include "tts/core/error.h"

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define TTS_AUTOCAST_BY_DEVICE_TYPE 1
#else
#define TTS_AUTOCAST_BY_DEVICE_TYPE 0
#endif

namespace tts::train::compat {

// The device types whose autocast tts-train drives (its model runs on the CPU or CUDA).
inline bool autocast_device_type(c10::DeviceType type) {
  return type == c10::DeviceType::CPU || type == c10::DeviceType::CUDA;
}

inline bool autocast_enabled(c10::DeviceType type) {
  if (!autocast_device_type(type)) return false;
#if TTS_AUTOCAST_BY_DEVICE_TYPE
  return at::autocast::is_autocast_enabled(type);
#else
  return type == c10::DeviceType::CPU ? at::autocast::is_cpu_enabled() : at::autocast::is_enabled();
#endif
}

inline void set_autocast_enabled(c10::DeviceType type, bool enabled) {
  TTS_CHECK(autocast_device_type(type), "autocast: device type {} is not supported (cpu, cuda)",
            c10::DeviceTypeName(type));
#if TTS_AUTOCAST_BY_DEVICE_TYPE
  at::autocast::set_autocast_enabled(type, enabled);
#else
  if (type == c10::DeviceType::CPU) {
    at::autocast::set_cpu_enabled(enabled);
  } else {
    at::autocast::set_enabled(enabled);
  }
#endif
}

inline c10::ScalarType autocast_dtype(c10::DeviceType type) {
#if TTS_AUTOCAST_BY_DEVICE_TYPE
  return at::autocast::get_autocast_dtype(type);
#else
  return type == c10::DeviceType::CPU ? at::autocast::get_autocast_cpu_dtype()
                                      : at::autocast::get_autocast_gpu_dtype();
#endif
}

inline void set_autocast_dtype(c10::DeviceType type, c10::ScalarType dtype) {
  TTS_CHECK(autocast_device_type(type), "autocast: device type {} is not supported (cpu, cuda)",
            c10::DeviceTypeName(type));
#if TTS_AUTOCAST_BY_DEVICE_TYPE
  at::autocast::set_autocast_dtype(type, dtype);
#else
  if (type == c10::DeviceType::CPU) {
    at::autocast::set_autocast_cpu_dtype(dtype);
  } else {
    at::autocast::set_autocast_gpu_dtype(dtype);
  }
#endif
}

}  // namespace tts::train::compat
