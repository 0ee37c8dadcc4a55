#include "zip_directory.h"

#include <algorithm>

#include "tts/core/error.h"

namespace tts::formats {
namespace {

constexpr uint32_t kEndSignature = 0x06054b50;
constexpr uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr uint32_t kZip64EndSignature = 0x06064b50;
constexpr uint32_t kEntrySignature = 0x02014b50;
constexpr uint32_t kLocalSignature = 0x04034b50;
constexpr uint64_t kEndSize = 22, kZip64LocatorSize = 20, kZip64EndSize = 56;
constexpr uint64_t kEntrySize = 46, kLocalSize = 30;
constexpr uint64_t kSaturated32 = 0xffffffff;

uint64_t little(const std::string& b, size_t at, int n) {
  TTS_CHECK(at <= b.size() && static_cast<size_t>(n) <= b.size() - at,
            "a zip structure is cut short");
  uint64_t v = 0;
  for (int i = n; i-- > 0;) v = (v << 8) | static_cast<unsigned char>(b[at + i]);
  return v;
}
uint64_t u16(const std::string& b, size_t at) { return little(b, at, 2); }
uint64_t u32(const std::string& b, size_t at) { return little(b, at, 4); }
uint64_t u64(const std::string& b, size_t at) { return little(b, at, 8); }

// A 32-bit field of the end record either says "see zip64" or equals the zip64 record's value.
void require_same(uint64_t narrow, uint64_t saturated, uint64_t wide, const char* what) {
  TTS_CHECK(narrow == saturated || narrow == wide,
            "the zip end record and its zip64 record disagree on the {} ({} and {})", what, narrow,
            wide);
}

// The sizes and offset of a central-directory entry, completed from its zip64 extra field as
// miniz does: the field holds, in this order, each of the three that is 0xffffffff.
struct EntrySizes {
  uint64_t compressed, uncompressed, local_offset;
};
void complete_from_zip64(EntrySizes& e, const std::string& extra, const std::string& name) {
  for (size_t x = 0; x + 4 <= extra.size();) {
    const size_t id = u16(extra, x), length = u16(extra, x + 2);
    TTS_CHECK(length <= extra.size() - x - 4, "zip entry '{}' has a damaged extra field", name);
    if (id == 0x0001) {
      size_t at = x + 4;
      for (uint64_t* field : {&e.uncompressed, &e.compressed, &e.local_offset}) {
        if (*field != kSaturated32) continue;
        TTS_CHECK(at + 8 <= x + 4 + length, "zip entry '{}' has a short zip64 field", name);
        *field = u64(extra, at);
        at += 8;
      }
      return;
    }
    x += 4 + length;
  }
  throw Error(fmt::format("zip entry '{}' has no zip64 field for its sizes", name));
}

}  // namespace

ZipDirectory::ZipDirectory(const FileDescriptor& fd, uint64_t size) : file_size_(size) {
  read_entries(fd, find_directory(fd));
}

// The end record (the last one: miniz searches from the end too) and, when a zip64 locator sits
// right before it, the zip64 record it points to, whose values miniz then uses.
ZipDirectory::Location ZipDirectory::find_directory(const FileDescriptor& fd) {
  const uint64_t tail_size = std::min<uint64_t>(file_size_, kEndSize + 65535);
  const std::string tail = read(fd, file_size_ - tail_size, tail_size);
  size_t end = std::string::npos;
  for (size_t i = tail.size() >= kEndSize ? tail.size() - kEndSize + 1 : 0; i-- > 0;) {
    if (u32(tail, i) == kEndSignature) {
      end = i;
      break;
    }
  }
  TTS_CHECK(end != std::string::npos, "no zip end-of-central-directory record");
  TTS_CHECK(u16(tail, end + 4) == 0 && u16(tail, end + 6) == 0 &&
                u16(tail, end + 8) == u16(tail, end + 10),
            "a multi-disk zip archive; torch.save writes one file");
  Location location{u16(tail, end + 10), u32(tail, end + 12), u32(tail, end + 16)};
  const uint64_t end_at = file_size_ - tail_size + end;
  const bool has_locator =
      end_at >= kZip64LocatorSize + kZip64EndSize &&
      u32(read(fd, end_at - kZip64LocatorSize, 4), 0) == kZip64LocatorSignature;
  if (!has_locator) {
    TTS_CHECK(location.entries != 0xffff && location.size != kSaturated32 &&
                  location.offset != kSaturated32,
              "a zip64 archive without its zip64 locator");
    return location;
  }
  const std::string locator = read(fd, end_at - kZip64LocatorSize, kZip64LocatorSize);
  TTS_CHECK(u32(locator, 16) == 1, "a multi-disk zip64 archive; torch.save writes one file");
  const uint64_t record_at = u64(locator, 8);
  TTS_CHECK(record_at <= end_at - kZip64LocatorSize - kZip64EndSize,
            "the zip64 locator points at byte {}, not before itself", record_at);
  const std::string record = read(fd, record_at, kZip64EndSize);
  TTS_CHECK(u32(record, 0) == kZip64EndSignature && u32(record, 16) == 0 && u32(record, 20) == 0 &&
                u64(record, 24) == u64(record, 32),
            "the zip64 locator points at no zip64 end record of a one-file archive");
  require_same(location.entries, 0xffff, u64(record, 32), "entry count");
  require_same(location.size, kSaturated32, u64(record, 40), "directory size");
  require_same(location.offset, kSaturated32, u64(record, 48), "directory offset");
  return {u64(record, 32), u64(record, 40), u64(record, 48)};
}

void ZipDirectory::read_entries(const FileDescriptor& fd, const Location& directory) {
  TTS_CHECK(directory.size <= file_size_ && directory.offset <= file_size_ - directory.size &&
                directory.entries <= directory.size / kEntrySize,
            "the zip directory claims {} entries in {} bytes at {}, past the file's {} bytes",
            directory.entries, directory.size, directory.offset, file_size_);
  const std::string bytes = read(fd, directory.offset, directory.size);
  size_t at = 0;
  for (uint64_t e = 0; e < directory.entries; ++e) at = read_entry(fd, bytes, at);
}

// One central-directory entry at `at`; returns where the next one starts.
size_t ZipDirectory::read_entry(const FileDescriptor& fd, const std::string& directory, size_t at) {
  TTS_CHECK(u32(directory, at) == kEntrySignature, "a damaged zip central directory at byte {}",
            at);
  const size_t name_length = u16(directory, at + 28), extra_length = u16(directory, at + 30);
  const size_t next = at + kEntrySize + name_length + extra_length + u16(directory, at + 32);
  TTS_CHECK(next <= directory.size(), "a damaged zip central directory at byte {}", at);
  const std::string name = directory.substr(at + kEntrySize, name_length);
  EntrySizes e{u32(directory, at + 20), u32(directory, at + 24), u32(directory, at + 42)};
  if (std::max({e.compressed, e.uncompressed, e.local_offset}) == kSaturated32) {
    complete_from_zip64(e, directory.substr(at + kEntrySize + name_length, extra_length), name);
  }
  TTS_CHECK(u16(directory, at + 10) == 0 && e.compressed == e.uncompressed,
            "zip record '{}' is compressed (method {}, {} bytes for {}); torch.save stores records "
            "as they are, and a compressed one can inflate far past the file's size",
            name, u16(directory, at + 10), e.compressed, e.uncompressed);
  const std::string local = read(fd, e.local_offset, kLocalSize);
  TTS_CHECK(u32(local, 0) == kLocalSignature, "zip record '{}' has no local header", name);
  const uint64_t data_at = e.local_offset + kLocalSize + u16(local, 26) + u16(local, 28);
  TTS_CHECK(data_at <= file_size_ && e.uncompressed <= file_size_ - data_at &&
                e.uncompressed <= file_size_ - record_bytes_,
            "its zip directory claims {} bytes for record '{}' at byte {} in a file of {} bytes "
            "(with {} bytes of other records); the file is damaged or made to exhaust memory",
            e.uncompressed, name, data_at, file_size_, record_bytes_);
  record_bytes_ += e.uncompressed;
  const size_t slash = name.find('/');
  const bool added =
      names_.insert(slash == std::string::npos ? name : name.substr(slash + 1)).second;
  TTS_CHECK(added,
            "two zip records are named '{}' (below their top folder); zip readers differ "
            "on which one they read",
            name);
  return next;
}

void ZipDirectory::check(const std::string& name, const std::string& file) const {
  TTS_CHECK(names_.count(name) != 0, "'{}' has no record '{}'; it is not a torch.save file", file,
            name);
}

std::string ZipDirectory::read(const FileDescriptor& fd, uint64_t offset, uint64_t size) const {
  TTS_CHECK(offset <= file_size_ && size <= file_size_ - offset,
            "a zip structure at byte {} reaches past the end of the file", offset);
  std::string bytes =
      read_at(fd, "the archive", static_cast<int64_t>(offset), static_cast<int64_t>(size));
  TTS_CHECK(bytes.size() == size, "it changed size while being read");
  return bytes;
}

}  // namespace tts::formats
