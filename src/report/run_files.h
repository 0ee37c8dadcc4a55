// Reading a run folder for the report, bounded and without following links: every size is
// checked before it is read, a symlink or a directory is not read as a file, and listings stop
// after a set number of entries. Private to the report module.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace tts::report {

// The size of `path` when it is a regular file (a symlink is not followed); otherwise nullopt and
// `why` says what was wrong.
std::optional<uint64_t> regular_file_size(const std::filesystem::path& path, std::string* why);
// Bytes of `path` when it is a regular file of at most `max_bytes`; otherwise nullopt and `why`
// says what was wrong.
std::optional<std::string> read_bounded(const std::filesystem::path& path, uint64_t max_bytes,
                                        std::string* why);
// The last `max_bytes` of a regular file, starting after a line break when cut.
std::optional<std::string> read_tail(const std::filesystem::path& path, uint64_t max_bytes,
                                     bool* cut, std::string* why);
// Regular files and symlinks directly in `dir`, at most `max_entries` looked at.
std::vector<std::filesystem::directory_entry> entries_of(const std::filesystem::path& dir,
                                                         size_t max_entries);
// The newest step N of the entries named `prefix`N`suffix` (N: 1 to 15 digits), if any. Names
// are parsed by hand: no regular expression runs on a name a run folder chose.
std::optional<int64_t> newest_step(const std::vector<std::filesystem::directory_entry>& entries,
                                   const std::string& prefix, const std::string& suffix);
std::string base64(const std::string& bytes);

}  // namespace tts::report
