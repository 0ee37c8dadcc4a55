// The central directory of a torch.save zip archive, read and checked before libtorch's zip reader
// (miniz, behind caffe2's PyTorchStreamReader) opens it, so that both see the same archive and
// nothing miniz allocates was left unchecked: miniz allocates a record's claimed size before it
// reads it, follows a zip64 locator wherever one sits before the end record, finds one of two
// records of the same name, and inflates deflated records to any size.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_set>

#include "tts/core/fs.h"

namespace tts::formats {

class ZipDirectory {
 public:
  // Reads the directory of the archive open as `fd` (`size` bytes, fixed when it was opened);
  // throws tts::Error (without the path: the caller adds it) for an archive that miniz could read
  // differently or that claims more than the file holds.
  ZipDirectory(const FileDescriptor& fd, uint64_t size);

  uint64_t file_size() const { return file_size_; }
  // Throws tts::Error naming `file` unless the archive has record `name` (without the archive's
  // top folder: "data.pkl", "data/0").
  void check(const std::string& name, const std::string& file) const;

 private:
  struct Location {
    uint64_t entries = 0, size = 0, offset = 0;
  };
  Location find_directory(const FileDescriptor& fd);
  void read_entries(const FileDescriptor& fd, const Location& directory);
  size_t read_entry(const FileDescriptor& fd, const std::string& directory, size_t at);
  std::string read(const FileDescriptor& fd, uint64_t offset, uint64_t size) const;

  uint64_t file_size_ = 0;
  uint64_t record_bytes_ = 0;  // the sizes of every record, summed
  std::unordered_set<std::string> names_;
};

}  // namespace tts::formats
