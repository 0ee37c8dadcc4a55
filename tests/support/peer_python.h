// The Python that runs a reference implementation's own code in conversion tests: TTS_PEER_PYTHON
// when set (a virtual environment with PyTorch), else Debian's /usr/bin/python3.
#pragma once

#include <cstdlib>
#include <string>

namespace tts::test {

inline std::string peer_python() {
  const char* chosen = std::getenv("TTS_PEER_PYTHON");
  return chosen != nullptr && *chosen != '\0' ? std::string(chosen) : "/usr/bin/python3";
}

}  // namespace tts::test
