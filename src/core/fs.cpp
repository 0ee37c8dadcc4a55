#include "tts/core/fs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

#include "tts/core/error.h"

namespace tts {
namespace {

std::string kind_of(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

[[noreturn]] void refuse_kind(const std::string& path, mode_t mode) {
  throw Error(fmt::format(
      "'{}' is {}, expected a regular file; tts-train neither follows links in run folders and "
      "stores (they may point outside) nor uses pipes or devices: replace it with the file itself",
      path, kind_of(mode)));
}

// Why opening `path` failed: a symlink met with O_NOFOLLOW (ELOOP) or a FIFO without a reader
// (ENXIO) is named as what it is.
[[noreturn]] void refuse_open(const std::string& path, const char* doing, int error) {
  struct stat status {};
  if (::lstat(path.c_str(), &status) == 0 && !S_ISREG(status.st_mode)) {
    refuse_kind(path, status.st_mode);
  }
  TTS_CHECK(error != ENOENT, "no such file '{}'", path);
  throw Error(fmt::format("cannot {} '{}': {}", doing, path, std::strerror(error)));
}

// After an O_NONBLOCK open: the file must be regular; then reads and writes block as usual.
FileDescriptor require_regular(FileDescriptor fd, const std::string& path) {
  struct stat status {};
  TTS_CHECK(::fstat(fd.get(), &status) == 0, "cannot inspect '{}': {}", path, std::strerror(errno));
  if (!S_ISREG(status.st_mode)) refuse_kind(path, status.st_mode);
  const int flags = ::fcntl(fd.get(), F_GETFL);
  TTS_CHECK(flags >= 0 && ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) == 0,
            "cannot use '{}': {}", path, std::strerror(errno));
  return fd;
}

std::string random_suffix() {
  std::random_device device;  // the kernel's random source: a name no one can plant ahead
  const uint64_t value = (static_cast<uint64_t>(device()) << 32) | device();
  return fmt::format("{:016x}", value);
}

}  // namespace

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

FileDescriptor::~FileDescriptor() {
  if (fd_ >= 0) ::close(fd_);
}

int FileDescriptor::release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

FileDescriptor open_regular_file_for_read(const std::string& path, Symlinks symlinks) {
  const int flags =
      O_RDONLY | O_NONBLOCK | O_CLOEXEC | (symlinks == Symlinks::kRefuse ? O_NOFOLLOW : 0);
  FileDescriptor fd(::open(path.c_str(), flags));
  if (fd.get() < 0) refuse_open(path, "read", errno);
  return require_regular(std::move(fd), path);
}

int64_t file_size(const FileDescriptor& fd, const std::string& path) {
  struct stat status {};
  TTS_CHECK(::fstat(fd.get(), &status) == 0, "cannot inspect '{}': {}", path, std::strerror(errno));
  return static_cast<int64_t>(status.st_size);
}

size_t read_at_into(const FileDescriptor& fd, const std::string& path, int64_t offset, char* buffer,
                    size_t count) {
  size_t done = 0;
  while (done < count) {
    const ssize_t n = ::pread(fd.get(), buffer + done, count - done,
                              static_cast<off_t>(offset + static_cast<int64_t>(done)));
    if (n < 0 && errno == EINTR) continue;
    TTS_CHECK(n >= 0, "cannot read '{}': {}", path, std::strerror(errno));
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

std::string read_at(const FileDescriptor& fd, const std::string& path, int64_t offset,
                    int64_t count) {
  std::string bytes(static_cast<size_t>(count), '\0');
  bytes.resize(read_at_into(fd, path, offset, bytes.data(), bytes.size()));
  return bytes;
}

std::string read_file(const std::string& path, Symlinks symlinks) {
  FileDescriptor fd = open_regular_file_for_read(path, symlinks);
  return read_at(fd, path, 0, file_size(fd, path));
}

FileDescriptor open_for_append(const std::string& path, bool truncate) {
  FileDescriptor fd(::open(
      path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644));
  if (fd.get() < 0) refuse_open(path, "append to", errno);
  fd = require_regular(std::move(fd), path);
  TTS_CHECK(!truncate || ::ftruncate(fd.get(), 0) == 0, "cannot empty '{}': {}", path,
            std::strerror(errno));
  return fd;
}

void write_all(const FileDescriptor& fd, std::string_view bytes, const std::string& path) {
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd.get(), bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    TTS_CHECK(n > 0, "cannot write '{}': {}", path, std::strerror(errno));
    written += static_cast<size_t>(n);
  }
}

void check_replaceable(const std::string& path) {
  struct stat status {};
  if (::lstat(path.c_str(), &status) != 0) {
    TTS_CHECK(errno == ENOENT, "cannot inspect '{}': {}", path, std::strerror(errno));
    return;
  }
  if (!S_ISREG(status.st_mode)) refuse_kind(path, status.st_mode);
}

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  check_replaceable(path_);
  temporary_ = path_ + ".tmp." + random_suffix();
  fd_ = FileDescriptor(
      ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  TTS_CHECK(fd_.get() >= 0, "cannot create '{}' to write '{}': {}", temporary_, path_,
            std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (!committed_) std::remove(temporary_.c_str());
}

void AtomicFile::commit() {
  TTS_CHECK(::fsync(fd_.get()) == 0, "cannot write '{}' to disk: {}", temporary_,
            std::strerror(errno));
  TTS_CHECK(::close(fd_.release()) == 0, "cannot write '{}': {}", temporary_, std::strerror(errno));
  check_replaceable(path_);  // planted while we wrote?
  TTS_CHECK(std::rename(temporary_.c_str(), path_.c_str()) == 0, "cannot rename '{}' to '{}': {}",
            temporary_, path_, std::strerror(errno));
  committed_ = true;
}

void replace_symlink(const std::string& link, const std::string& target) {
  struct stat status {};
  // A copy of a run may hold the pointer as a plain file: renaming over either writes nothing.
  if (::lstat(link.c_str(), &status) == 0 && !S_ISLNK(status.st_mode) && !S_ISREG(status.st_mode)) {
    throw Error(
        fmt::format("'{}' is {}, expected the symbolic link tts-train writes there; "
                    "remove it",
                    link, kind_of(status.st_mode)));
  }
  const std::string temporary = link + ".tmp." + random_suffix();
  TTS_CHECK(::symlink(target.c_str(), temporary.c_str()) == 0, "cannot create '{}': {}", temporary,
            std::strerror(errno));
  if (std::rename(temporary.c_str(), link.c_str()) != 0) {
    const int error = errno;
    std::remove(temporary.c_str());
    throw Error(
        fmt::format("cannot rename '{}' to '{}': {}", temporary, link, std::strerror(error)));
  }
}

void create_folder(const std::string& path) {
  std::error_code ec;  // another rank may create it at the same time: what lstat sees decides
  std::filesystem::create_directories(path, ec);
  struct stat status {};
  TTS_CHECK(::lstat(path.c_str(), &status) == 0, "cannot create the folder '{}': {}", path,
            ec ? ec.message() : std::strerror(errno));
  if (!S_ISDIR(status.st_mode)) {
    throw Error(
        fmt::format("'{}' is {}, expected a folder; tts-train does not write through "
                    "links (they may point outside): remove it",
                    path, kind_of(status.st_mode)));
  }
}

void write_file_atomic(const std::string& path, std::string_view bytes) {
  AtomicFile file(path);
  write_all(file.fd(), bytes, file.temporary_path());
  file.commit();
}

}  // namespace tts
