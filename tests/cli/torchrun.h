// Test helper: where torchrun is, and a rendezvous endpoint for it.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "tts/dist/launcher.h"

namespace tts::test {

// torchrun of PyTorch 2.x: TTS_TORCHRUN, else the one scripts/setup.sh --torch pip installs.
inline std::string torchrun_path() {
  if (const char* path = std::getenv("TTS_TORCHRUN"); path && *path) return path;
  return std::string(TTS_SOURCE_DIR) + "/.deps/torch-2.11.0/bin/torchrun";
}

// Why a torchrun test cannot run here, for GTEST_SKIP.
inline std::string no_torchrun_reason() {
  return "no torchrun at " + torchrun_path() +
         ": install PyTorch 2.x with scripts/setup.sh --torch pip, or set TTS_TORCHRUN to a "
         "torchrun of PyTorch 2.x";
}

// A free port whose next one is free too: under torchrun 2.x our rank 0 hosts its store on
// MASTER_PORT + 1 (the agent's store holds MASTER_PORT), and under ctest -j another test may hold
// any port.
inline int free_port_pair() {
  for (int attempt = 0; attempt < 50; ++attempt) {
    const int port = tts::dist::pick_free_port("127.0.0.1");
    const int next = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port + 1));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool free =
        ::bind(next, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0;
    ::close(next);
    if (free) return port;
  }
  ADD_FAILURE() << "no two consecutive free ports on 127.0.0.1 in 50 tries";
  return 0;
}

}  // namespace tts::test
