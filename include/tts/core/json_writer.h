// JSON text written by hand (metrics lines, `inspect --json`): strings escaped once, here.
#pragma once

#include <string>
#include <string_view>

namespace tts {

// `text` as a JSON string, quoted: quotes, backslashes and control characters (a file's bytes,
// maybe escape sequences) escaped.
std::string json_string(std::string_view text);

}  // namespace tts
