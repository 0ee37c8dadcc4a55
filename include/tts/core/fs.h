// The one home of file access in folders someone else may have prepared (run folders, feature
// stores; docs/security.md): files are read and written only as regular files, never through a
// symlink planted in the folder, never blocking on a FIFO, and every write under a folder is
// atomic (an unpredictable temporary in the same folder, then a rename), so an interrupted run
// never leaves a partial file under its final name.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tts {

// Whether the last component of a path may be a symlink. Files inside a run folder or a store
// refuse them (kRefuse); a file the user names on the command line or a corpus's own files may be
// links the user made (kFollow). Either way the file opened must be a regular file.
enum class Symlinks { kRefuse, kFollow };

// An open file descriptor, closed when destroyed.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd = -1) : fd_(fd) {}
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(other.release()) {}
  FileDescriptor& operator=(FileDescriptor&& other) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor();
  int get() const { return fd_; }
  int release();

 private:
  int fd_;
};

// Opens `path` for reading. A FIFO, a device, a socket or a directory is refused without blocking
// (the file is opened with O_NONBLOCK and checked with fstat before any read), and so is a symlink
// as the last component under Symlinks::kRefuse. Throws tts::Error naming the path and what it is.
FileDescriptor open_regular_file_for_read(const std::string& path,
                                          Symlinks symlinks = Symlinks::kRefuse);

// The size of the regular file open as `fd` (`path` names it in errors).
int64_t file_size(const FileDescriptor& fd, const std::string& path);

// The whole regular file `path` (opened as open_regular_file_for_read does). Throws tts::Error.
std::string read_file(const std::string& path, Symlinks symlinks = Symlinks::kRefuse);

// Reads up to `count` bytes of `fd` from byte `offset` into `buffer`, retrying short and
// interrupted reads; fewer only at the end of the file (returns how many). Throws tts::Error
// naming `path` on a read error.
size_t read_at_into(const FileDescriptor& fd, const std::string& path, int64_t offset, char* buffer,
                    size_t count);

// `count` bytes of `fd` from byte `offset`, fewer only at the end of the file.
std::string read_at(const FileDescriptor& fd, const std::string& path, int64_t offset,
                    int64_t count);

// Opens `path` for appending (created 0644 when missing), refusing a symlink and anything but a
// regular file, without blocking. `truncate` empties the file once it is known to be regular.
FileDescriptor open_for_append(const std::string& path, bool truncate = false);

// Writes all of `bytes` to `fd`, retrying short writes; throws tts::Error naming `path`.
void write_all(const FileDescriptor& fd, std::string_view bytes, const std::string& path);

// A file being written in place of `path`: created as `path.tmp.<random>` with O_EXCL and
// O_NOFOLLOW in the same folder (the folder must exist), so a planted temporary or symlink is
// never opened; commit() flushes it to disk and renames it over `path`. A `path` that exists as a
// symlink or anything but a regular file is refused, before and at the rename. The temporary is
// removed when the object is destroyed uncommitted.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();
  const FileDescriptor& fd() const { return fd_; }
  const std::string& temporary_path() const { return temporary_; }
  void commit();

 private:
  std::string path_;
  std::string temporary_;
  FileDescriptor fd_;
  bool committed_ = false;
};

// Writes `bytes` to `path` through an AtomicFile. Throws tts::Error naming the path and the
// system's reason.
void write_file_atomic(const std::string& path, std::string_view bytes);

// Points the symlink `link` at `target` (a name in the same folder), atomically: a new link under
// an unpredictable name, renamed over `link` (a symlink or a regular file there is replaced, not
// followed; a directory or anything else is refused).
// For pointers such as checkpoints/latest, which are read by name, never followed.
void replace_symlink(const std::string& link, const std::string& target);

// Creates the folder `path` (and its parents) when missing. The folder itself must be a real
// directory, not a symlink (whose writes would land elsewhere); the parents it lies in are the
// caller's choice. Throws tts::Error naming what `path` is.
void create_folder(const std::string& path);

// Throws tts::Error unless `path` is absent or a regular file that is not a symlink: what may be
// replaced by a write of ours.
void check_replaceable(const std::string& path);

}  // namespace tts
