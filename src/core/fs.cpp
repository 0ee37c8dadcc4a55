#include "tts/core/fs.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tts/core/error.h"

namespace tts {

void write_file_atomic(const std::string& path, const std::string& bytes) {
  std::string temporary = path + ".tmp." + std::to_string(getpid());
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  TTS_CHECK(fd >= 0, "cannot create '{}': {}", temporary, std::strerror(errno));
  size_t written = 0;
  while (written < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int error = errno;
      ::close(fd);
      std::remove(temporary.c_str());
      throw Error(fmt::format("cannot write '{}': {}", temporary, std::strerror(error)));
    }
    written += static_cast<size_t>(n);
  }
  ::fsync(fd);
  ::close(fd);
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    int error = errno;
    std::remove(temporary.c_str());
    throw Error(
        fmt::format("cannot rename '{}' to '{}': {}", temporary, path, std::strerror(error)));
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  TTS_CHECK(in.good(), "cannot read '{}': {}", path, std::strerror(errno));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace tts
