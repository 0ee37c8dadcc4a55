// Text helpers the corpus readers share: the lines of a table, its fields, and what names an
// utterance. Private to src/data.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tts::data {

// `text` without leading and trailing spaces and tabs.
std::string trim(const std::string& text);

// `line` split at every `separator` (no quoting: quotes inside transcripts are kept).
std::vector<std::string> split_fields(const std::string& line, char separator);

// What stands in for the id of a line that has none: its first 40 characters, tabs as spaces.
std::string excerpt(const std::string& line);

// Calls `each(line_number, line)` for every line of `text` that is not blank (1-based numbers),
// after a UTF-8 byte-order mark and with Windows line ends taken off.
void for_each_line(const std::string& text,
                   const std::function<void(int64_t, const std::string&)>& each);

// Why `id` cannot name an utterance's files, as a problem's reason ("malformed line: ..."), or "".
std::string id_problem(const std::string& id);

// A corpus's table or transcript file (links followed: a corpus is the user's), refused past
// 256 MiB (LJSpeech's metadata.csv is 3.7 MB; a transcript, bytes), naming the file.
std::string read_bounded_text(const std::string& path, int64_t max_bytes = int64_t{256} << 20);

}  // namespace tts::data
