// Builds zip archives byte by byte, for tests of the zip pre-check (src/formats/zip_directory.h):
// every field that a hostile archive could set differently from torch.save is a parameter.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tts::test {

struct ZipEntry {
  std::string name;
  std::string data;
  uint16_t method = 0;           // 0 stored, 8 deflated (the data is stored all the same)
  int64_t local_header_of = -1;  // >= 0: point at that earlier entry's local header
};

struct ZipLayout {
  bool zip64_end = true;         // a zip64 end record and locator before the end record
  int64_t zip64_entries = -1;    // >= 0: the count the zip64 record claims
  int64_t zip64_record_at = -1;  // >= 0: where the locator says the zip64 record is
};

inline void put(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

// `entries` as a zip archive, laid out as `layout` says.
inline std::string zip_archive(const std::vector<ZipEntry>& entries, const ZipLayout& layout = {}) {
  std::string out, directory;
  std::vector<uint64_t> offsets;
  for (const ZipEntry& e : entries) {
    offsets.push_back(e.local_header_of >= 0 ? offsets[e.local_header_of] : out.size());
    if (e.local_header_of < 0) {
      put(out, 0x04034b50, 4);
      put(out, 20, 2), put(out, 0, 2), put(out, e.method, 2), put(out, 0, 4), put(out, 0, 4);
      put(out, e.data.size(), 4), put(out, e.data.size(), 4);
      put(out, e.name.size(), 2), put(out, 0, 2);
      out += e.name + e.data;
    }
    put(directory, 0x02014b50, 4);
    put(directory, 20, 2), put(directory, 20, 2), put(directory, 0, 2), put(directory, e.method, 2);
    put(directory, 0, 4), put(directory, 0, 4);
    put(directory, e.data.size(), 4), put(directory, e.data.size(), 4);
    put(directory, e.name.size(), 2), put(directory, 0, 2), put(directory, 0, 2);
    put(directory, 0, 2), put(directory, 0, 2), put(directory, 0, 4);
    put(directory, offsets.back(), 4);
    directory += e.name;
  }
  const uint64_t directory_at = out.size();
  out += directory;
  if (layout.zip64_end) {
    const uint64_t record_at = out.size();
    put(out, 0x06064b50, 4), put(out, 44, 8), put(out, 45, 2), put(out, 45, 2);
    put(out, 0, 4), put(out, 0, 4);
    const uint64_t count = layout.zip64_entries >= 0 ? layout.zip64_entries : entries.size();
    put(out, count, 8), put(out, count, 8);
    put(out, directory.size(), 8), put(out, directory_at, 8);
    put(out, 0x07064b50, 4), put(out, 0, 4);
    put(out, layout.zip64_record_at >= 0 ? layout.zip64_record_at : record_at, 8), put(out, 1, 4);
  }
  put(out, 0x06054b50, 4), put(out, 0, 2), put(out, 0, 2);
  put(out, entries.size(), 2), put(out, entries.size(), 2);
  put(out, directory.size(), 4), put(out, directory_at, 4), put(out, 0, 2);
  return out;
}

}  // namespace tts::test
