// The inputs of `tts-train evaluate`: the clips of a folder by id, and the id tables (`--text`,
// `--speakers`). Every file is untrusted: a folder is listed, not walked (no subfolders), a
// symlink whose target lies outside the folder is refused, and the tables are bounded.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace tts::eval {

constexpr int64_t kMaxClipsPerFolder = 100000;
constexpr int64_t kMaxTableBytes = int64_t{16} << 20;

// id (the file's stem) -> path, for the .wav, .flac and .ogg files (any case) directly inside
// `folder`; other files are skipped. Throws tts::UsageError when `folder` is not a folder
// (`option` names it: "--reference"), tts::Error for two files of one id (a.wav and a.flac), a
// symlink that leaves the folder or is broken, or more than kMaxClipsPerFolder clips.
std::map<std::string, std::string> find_clips(const std::string& folder, const std::string& option);

// A table of `id SEPARATOR value` lines, SEPARATOR a tab or '|' (LJSpeech's metadata.csv:
// `id|text|normalized text`, whose last field is taken). Empty lines and lines starting with '#'
// are skipped. Throws tts::Error naming the file and line for a line without a separator, an
// empty id or value, an id given twice, or a file past kMaxTableBytes; `what` says what the values
// are ("speaker").
std::map<std::string, std::string> read_id_table(const std::string& path, const std::string& what);

}  // namespace tts::eval
