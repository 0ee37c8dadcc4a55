// What may name a speaker (tts/data/corpus.h): the store writes the name in its tables.
#include <fmt/format.h>

#include "tts/core/printable.h"
#include "tts/data/corpus.h"

namespace tts::data {

std::string speaker_name_problem(const std::string& name) {
  if (name.empty()) return "bad speaker: the speaker's name is empty";
  if (name.size() > 128) {
    return fmt::format("bad speaker: a name of {} bytes, more than 128", name.size());
  }
  bool control = false;
  for (char c : name) control = control || static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  if (name == "." || name == ".." || control || name.find_first_of("/\\ ") != std::string::npos) {
    return fmt::format(
        "bad speaker: '{}' cannot name a speaker (no '/', '\\', spaces or control characters, "
        "not '.' or '..'); rename it",
        printable(name));
  }
  return "";
}

}  // namespace tts::data
