#include "run_files.h"

#include <fmt/format.h>

#include "tts/core/error.h"
#include "tts/core/fs.h"

namespace tts::report {
namespace fs = std::filesystem;

// The size of `path` when it is a regular file (a symlink is not followed); otherwise nullopt and
// `why` says what was wrong.
std::optional<uint64_t> regular_file_size(const fs::path& path, std::string* why) {
  std::error_code ec;
  auto status = fs::symlink_status(path, ec);
  if (ec || !fs::exists(status)) {
    *why = "missing";
    return std::nullopt;
  }
  if (!fs::is_regular_file(status)) {
    *why = "not a regular file (a symlink or a directory is not followed)";
    return std::nullopt;
  }
  uint64_t size = fs::file_size(path, ec);
  if (ec) {
    *why = "cannot be read: " + ec.message();
    return std::nullopt;
  }
  return size;
}

namespace {

// `count` bytes of `path` from byte `start`; nullopt (and `why`) when they cannot be read. The
// file is opened as fs.h opens what a run folder holds: no link, nothing but a regular file (it
// may have been replaced since regular_file_size looked).
std::optional<std::string> read_range(const fs::path& path, uint64_t start, uint64_t count,
                                      std::string* why) {
  try {
    const FileDescriptor fd = open_regular_file_for_read(path.string());
    std::string bytes =
        read_at(fd, path.string(), static_cast<int64_t>(start), static_cast<int64_t>(count));
    if (bytes.size() == count) return bytes;
    *why = "cut short while it was read";
  } catch (const Error& e) {
    *why = e.what();
  }
  return std::nullopt;
}

}  // namespace

// Bytes of `path` when it is a regular file of at most `max_bytes`; otherwise nullopt and `why`
// says what was wrong.
std::optional<std::string> read_bounded(const fs::path& path, uint64_t max_bytes,
                                        std::string* why) {
  std::optional<uint64_t> size = regular_file_size(path, why);
  if (!size) return std::nullopt;
  if (*size > max_bytes) {
    *why = fmt::format("{} bytes, more than the {} this report reads", *size, max_bytes);
    return std::nullopt;
  }
  return read_range(path, 0, *size, why);
}

// The last `max_bytes` of a regular file, starting after a line break when cut.
std::optional<std::string> read_tail(const fs::path& path, uint64_t max_bytes, bool* cut,
                                     std::string* why) {
  std::optional<uint64_t> size = regular_file_size(path, why);
  if (!size) return std::nullopt;
  *cut = *size > max_bytes;
  const uint64_t start = *cut ? *size - max_bytes : 0;
  std::optional<std::string> bytes = read_range(path, start, *size - start, why);
  if (bytes && *cut) {
    size_t newline = bytes->find('\n');
    bytes->erase(0, newline == std::string::npos ? bytes->size() : newline + 1);
  }
  return bytes;
}

// Regular files and symlinks directly in `dir`, at most `max_entries` looked at.
std::vector<fs::directory_entry> entries_of(const fs::path& dir, size_t max_entries) {
  std::vector<fs::directory_entry> entries;
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(dir, ec))) return entries;
  fs::directory_iterator it(dir, ec);
  for (size_t seen = 0; !ec && it != fs::directory_iterator() && seen < max_entries;
       it.increment(ec), ++seen) {
    entries.push_back(*it);
  }
  return entries;
}

std::string base64(const std::string& bytes) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  auto byte = [&](size_t at) {
    return static_cast<uint32_t>(static_cast<unsigned char>(bytes[at]));
  };
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t v = byte(i) << 16 | byte(i + 1) << 8 | byte(i + 2);
    for (int shift : {18, 12, 6, 0}) out += kAlphabet[(v >> shift) & 63];
  }
  if (i < bytes.size()) {
    uint32_t v = byte(i) << 16 | (i + 1 < bytes.size() ? byte(i + 1) << 8 : 0);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::optional<int64_t> newest_step(const std::vector<fs::directory_entry>& entries,
                                   const std::string& prefix, const std::string& suffix) {
  std::optional<int64_t> newest;
  for (const auto& entry : entries) {
    const std::string file = entry.path().filename().string();
    if (file.size() <= prefix.size() + suffix.size() || file.compare(0, prefix.size(), prefix) ||
        file.compare(file.size() - suffix.size(), suffix.size(), suffix)) {
      continue;
    }
    const std::string digits =
        file.substr(prefix.size(), file.size() - prefix.size() - suffix.size());
    if (digits.size() > 15 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    const int64_t step = std::stoll(digits);
    if (!newest || step > *newest) newest = step;
  }
  return newest;
}

}  // namespace tts::report
