// Bytes from a file, made safe to print: every message that quotes a file's content (a symbol, a
// tensor name, a key, a transcript) passes it through printable(), and the log sinks pass every
// line through it, so a file cannot move the cursor, ring the bell or rewrite a terminal's title.
#pragma once

#include <string>
#include <string_view>

namespace tts {

// `text` with every control character written as an escape: C0 bytes and DEL as \xNN, the C1
// controls (U+0080 to U+009F, which some terminals obey as escape sequences) as \uNNNN, and bytes
// that are not UTF-8 as \xNN. Printable UTF-8 passes unchanged. `keep_newlines`: '\n' and '\t'
// stay (a message of ours may span lines; a quoted value never should).
std::string printable(std::string_view text, bool keep_newlines = false);

}  // namespace tts
