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

// c10d's Gloo header is empty unless USE_C10D_GLOO is defined. libtorch's CMake targets define it
// where Gloo is built in (Debian's 1.13 and the PyTorch wheels); some packagings do not
// (pytorch/pytorch#65918), and every libtorch we support has Gloo.
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO
#endif

// clang-format off
#include <c10/util/Exception.h>
#include <c10/util/Logging.h>
#include <torch/version.h>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
// clang-format on

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

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

// The address this host's Gloo device binds to and advertises to the other ranks. Gloo picks the
// address the host name resolves to, which is loopback on many machines (Debian's "127.0.1.1
// hostname" line; containers): the ranks on another host then connect to their own loopback, and
// fail or hang. Instead: the local address of a UDP socket connected towards MASTER_ADDR (connect
// sends nothing; the kernel only chooses the route and its source address), which is the address
// the other hosts reach this one by. Loopback only for a loopback master (all ranks on this host).
// Throws std::runtime_error naming MASTER_ADDR and GLOO_SOCKET_IFNAME when there is no route.
inline std::string gloo_address_towards(const std::string& master_addr) {
  std::string error = "it does not resolve";
  // IPv4 first: "localhost" resolves to ::1 too, and the TCPStore meets on IPv4.
  for (const int family : {AF_INET, AF_INET6}) {
    addrinfo hints{};
    hints.ai_family = family;
    hints.ai_socktype = SOCK_DGRAM;
    addrinfo* found = nullptr;
    if (::getaddrinfo(master_addr.c_str(), "9", &hints, &found) != 0) continue;
    for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
      const int fd = ::socket(a->ai_family, SOCK_DGRAM, 0);
      if (fd < 0) continue;
      sockaddr_storage local{};
      socklen_t length = sizeof(local);
      const bool ok = ::connect(fd, a->ai_addr, a->ai_addrlen) == 0 &&
                      ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) == 0;
      if (!ok) error = std::string("connect: ") + std::strerror(errno);
      ::close(fd);
      if (!ok) continue;
      char text[INET6_ADDRSTRLEN] = {};
      const void* raw =
          local.ss_family == AF_INET
              ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&local)->sin_addr)
              : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&local)->sin6_addr);
      ::inet_ntop(local.ss_family, raw, text, sizeof(text));
      ::freeaddrinfo(found);
      return text;
    }
    ::freeaddrinfo(found);
  }
  throw std::runtime_error("no route from this host towards MASTER_ADDR=" + master_addr + " (" +
                           error +
                           "); set MASTER_ADDR to rank 0's host, or GLOO_SOCKET_IFNAME "
                           "to the network interface the ranks share");
}

// The Gloo transport device: the interface named by GLOO_SOCKET_IFNAME when set (as in PyTorch),
// else the address that routes towards MASTER_ADDR (above). `advertised` receives a description
// of the choice, for error messages.
inline std::shared_ptr<::gloo::transport::Device> make_gloo_device(const std::string& master_addr,
                                                                   std::string* advertised) {
  if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname) {
    *advertised = std::string("the address of interface ") + ifname + " (GLOO_SOCKET_IFNAME)";
    return c10d::ProcessGroupGloo::createDeviceForInterface(ifname);
  }
  const std::string address = gloo_address_towards(master_addr);
  *advertised = address + " (the source address of the route towards MASTER_ADDR=" + master_addr +
                "; GLOO_SOCKET_IFNAME unset)";
  return c10d::ProcessGroupGloo::createDeviceForHostname(address);
}

inline GroupPtr make_gloo_group(const StorePtr& store, int rank, int size,
                                const std::string& master_addr, double timeout_s,
                                std::string* advertised) {
  auto opts = c10d::ProcessGroupGloo::Options::create(to_ms(timeout_s));
  opts->devices.push_back(make_gloo_device(master_addr, advertised));
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, opts);
}

// An exception's message without the C++ stack trace c10::Error appends: the user needs the
// cause, not libtorch's frames.
inline std::string message_of(const std::exception& e) {
  if (const auto* error = dynamic_cast<const c10::Error*>(&e))
    return error->what_without_backtrace();
  return e.what();
}

// c10d logs its own lines (glog's "Logging before InitGoogleLogging()" and "[c10d] The client
// socket has timed out" in 1.13; "[W socket.cpp...]" in 2.x) before the exception that tts-train
// reports with its context: keep only fatal ones unless the user asked for debug logging.
inline void quiet_c10_logging(bool verbose) {
  const int level = verbose ? 0 : 3;  // glog's INFO .. FATAL
  // A global variable in both: gflags' in Debian's 1.13, c10's own (declared in the global
  // namespace) in the 2.x wheels, which are built without gflags and glog.
  FLAGS_caffe2_log_level = level;
#ifdef C10_USE_GLOG
  FLAGS_minloglevel = level;
#endif
}

// NCCL's error handling, chosen so that a failure ends in our diagnosis ("lost rank N") as on
// Gloo, unless the user set these variables. By default a WorkNCCL::wait() only makes the
// current stream wait, and on a timeout the watchdog thread tears the process down
// (TORCH_NCCL_ASYNC_ERROR_HANDLING=3 in 2.x): the process dies with a watchdog message, our code
// never sees an error. With blocking wait, wait() blocks until the collective completes and
// throws on an NCCL error or after the group's timeout, and the watchdog no longer tears down
// (2.x: "only TORCH_NCCL_BLOCKING_WAIT is being used"): Communicator turns the exception into the
// heartbeat diagnosis. The gradient reducer needs the reduced gradients on the host's timeline
// anyway (clipping reads the norm), so blocking costs no overlap. Call before creating the group.
inline void configure_nccl_error_handling() {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 2)
  setenv("TORCH_NCCL_BLOCKING_WAIT", "1", /*overwrite=*/0);
#else
  setenv("NCCL_BLOCKING_WAIT", "1", /*overwrite=*/0);
#endif
}

// Ends a process group before its store goes away: 2.x's Backend::shutdown() (NCCL: destroys
// its communicators cleanly, after a failure aborts them), then the reference is dropped. In
// 1.13 the destructor does it. Never throws: it runs on the way out, possibly after a failure.
inline void shutdown_group(GroupPtr& group, bool after_failure) {
  if (!group) return;
  try {
#if TORCH_VERSION_MAJOR >= 2
    if (after_failure) {
      group->abort();
    } else {
      group->shutdown();
    }
#else
    (void)after_failure;
#endif
  } catch (const std::exception&) {
    // A peer is gone already; nothing left to shut down cleanly.
  }
  group.reset();
}

}  // namespace tts::dist::compat
