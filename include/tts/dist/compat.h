// Every difference between the libtorch versions tts-train builds against (1.13 on the CPU
// machines, 2.x on the GPU machines) that the dist module meets, in one place. Include only from
// src/dist/*.cpp: it pulls in c10d's headers.
//
// 1.13: ProcessGroupGloo/NCCL derive from c10d::ProcessGroup; their Options derive from
//       ProcessGroup::Options; NCCL's asynchronous error handling is NCCL_ASYNC_ERROR_HANDLING.
// 2.x:  they derive from c10d::Backend (ProcessGroup became a dispatcher over backends); Options
//       derive from Backend::Options (same `timeout` member); createDeviceFor*() gained a
//       defaulted `lazyInit` argument; the variable became TORCH_NCCL_ASYNC_ERROR_HANDLING
//       (2.2+); TCPStoreOptions gained defaulted members (masterListenFd, useLibUV).
// In both, c10d::Work is the handle of an asynchronous collective (wait() throws on failure) and
// the constructors used here have the same parameters: (store, rank, size, options).
#pragma once

#include <torch/version.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/distributed/c10d/Backend.hpp>
#else
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#endif

namespace tts::dist::compat {

#if TORCH_VERSION_MAJOR >= 2
// What a Gloo or NCCL group is an instance of.
using GroupBase = c10d::Backend;
#else
using GroupBase = c10d::ProcessGroup;
#endif
using GroupPtr = c10::intrusive_ptr<GroupBase>;
using StorePtr = c10::intrusive_ptr<c10d::Store>;
using WorkPtr = c10::intrusive_ptr<c10d::Work>;

inline std::chrono::milliseconds to_ms(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000.0));
}

// A TCPStore server (`is_server`) or client. With `num_workers` > 0 every rank takes part in the
// start-up count (the server waits until that many, itself included, have connected); an extra
// client opened later passes 0. `timeout_s` bounds connecting and every blocking get/wait.
inline StorePtr make_tcp_store(const std::string& host, int port, bool is_server, int num_workers,
                               double timeout_s) {
  c10d::TCPStoreOptions opts;
  opts.port = static_cast<std::uint16_t>(port);
  opts.isServer = is_server;
  if (num_workers > 0) opts.numWorkers = static_cast<std::size_t>(num_workers);
  opts.waitWorkers = true;
  opts.timeout = to_ms(timeout_s);
  return c10::make_intrusive<c10d::TCPStore>(host, opts);
}

// The Gloo transport device: the interface named by GLOO_SOCKET_IFNAME when set (as in PyTorch),
// loopback for a loopback master, else the address this host's name resolves to.
inline std::shared_ptr<::gloo::transport::Device> make_gloo_device(const std::string& master_addr) {
  if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname) {
    return c10d::ProcessGroupGloo::createDeviceForInterface(ifname);
  }
  if (master_addr == "127.0.0.1" || master_addr == "localhost") {
    return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  }
  return c10d::ProcessGroupGloo::createDefaultDevice();
}

inline GroupPtr make_gloo_group(const StorePtr& store, int rank, int size,
                                const std::string& master_addr, double timeout_s) {
  auto opts = c10d::ProcessGroupGloo::Options::create(to_ms(timeout_s));
  opts->devices.push_back(make_gloo_device(master_addr));
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, opts);
}

// Makes NCCL errors and timeouts tear the collective down (and surface as exceptions) instead of
// hanging, unless the user chose otherwise. Call before creating an NCCL group.
inline void enable_nccl_async_error_handling() {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 2)
  setenv("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1", /*overwrite=*/0);
#else
  setenv("NCCL_ASYNC_ERROR_HANDLING", "1", /*overwrite=*/0);
#endif
}

}  // namespace tts::dist::compat
