// File-system helpers: atomic writes (temporary file + rename) so that an interrupted run never
// leaves a partial file under its final name.
#pragma once

#include <string>

namespace tts {

// Writes `bytes` to `path.tmp.<pid>`, flushes it to disk, then renames it to `path`. The parent
// directory must exist. Throws tts::Error naming the path and the system's reason.
void write_file_atomic(const std::string& path, const std::string& bytes);

// Reads a whole file; throws tts::Error naming the path when it cannot be read.
std::string read_file(const std::string& path);

}  // namespace tts
