#include "tts/data/ljspeech.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <unordered_map>

#include "corpus_text.h"
#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/core/printable.h"

namespace tts::data {
namespace {

bool is_blank(const std::string& text) {
  return text.find_first_not_of(" \t\r\n") == std::string::npos;
}

}  // namespace

std::string trim(const std::string& text) {
  size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  size_t end = text.find_last_not_of(" \t");
  return text.substr(begin, end - begin + 1);
}

std::vector<std::string> split_fields(const std::string& line, char separator) {
  std::vector<std::string> fields;
  size_t start = 0;
  while (true) {
    size_t end = line.find(separator, start);
    if (end == std::string::npos) {
      fields.push_back(line.substr(start));
      return fields;
    }
    fields.push_back(line.substr(start, end - start));
    start = end + 1;
  }
}

std::string excerpt(const std::string& line) {
  std::string start = line.substr(0, 40);
  for (char& c : start) {
    if (c == '\t') c = ' ';
  }
  return line.size() > 40 ? start + "..." : start;
}

void for_each_line(const std::string& text,
                   const std::function<void(int64_t, const std::string&)>& each) {
  size_t start = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  int64_t line_number = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!is_blank(line)) each(line_number, line);
  }
}

std::string id_problem(const std::string& id) {
  if (id.empty()) return "malformed line: the id is empty";
  if (id == "." || id == ".." || id.find_first_of("/\\ \t") != std::string::npos) {
    return fmt::format(
        "malformed line: id '{}' cannot name a file (no '/', '\\', spaces, '.' or '..')",
        printable(id));
  }
  return "";
}

std::string read_bounded_text(const std::string& path, int64_t max_bytes) {
  const FileDescriptor fd = open_regular_file_for_read(path, Symlinks::kFollow);
  const int64_t size = file_size(fd, path);
  TTS_CHECK(size <= max_bytes,
            "'{}' has {} bytes, more than the {} a corpus's text file may have; split it", path,
            size, max_bytes);
  return read_at(fd, path, 0, size);
}

Metadata parse_ljspeech_metadata(const std::string& text) {
  Metadata metadata;
  std::unordered_map<std::string, int64_t> first_line;
  for_each_line(text, [&](int64_t line_number, const std::string& line) {
    std::vector<std::string> fields = split_fields(line, '|');
    if (fields.size() < 2 || fields.size() > 3) {
      metadata.problems.push_back(
          {line_number, excerpt(line),
           fmt::format("malformed line: expected 2 or 3 '|'-separated columns "
                       "(ID|raw|normalized), found {}",
                       fields.size())});
      return;
    }
    std::string id = trim(fields[0]);
    if (std::string why = id_problem(id); !why.empty()) {
      metadata.problems.push_back({line_number, excerpt(line), why});
      return;
    }
    auto [previous, inserted] = first_line.emplace(id, line_number);
    if (!inserted) {
      metadata.problems.push_back(
          {line_number, id,
           fmt::format("duplicate id: first on line {}, which is kept", previous->second)});
      return;
    }
    bool has_normalized = fields.size() == 3 && !is_blank(fields[2]);
    metadata.entries.push_back({line_number, id, has_normalized ? fields[2] : fields[1]});
  });
  return metadata;
}

Metadata read_ljspeech_metadata(const std::string& corpus_dir) {
  std::string path = (std::filesystem::path(corpus_dir) / "metadata.csv").string();
  TTS_CHECK(std::filesystem::is_regular_file(path),
            "no '{}': an LJSpeech-format corpus has metadata.csv (lines ID|raw|normalized) and "
            "wavs/ID.wav; check --input",
            path);
  return parse_ljspeech_metadata(read_bounded_text(path));
}

const std::vector<std::string>& ljspeech_audio_extensions() {
  static const std::vector<std::string> extensions{".wav", ".flac", ".ogg", ".opus"};
  return extensions;
}

AudioLookup find_ljspeech_audio(const std::string& corpus_dir, const std::string& id) {
  const std::filesystem::path stem = std::filesystem::path(corpus_dir) / "wavs" / id;
  std::vector<std::string> found;
  for (const std::string& extension : ljspeech_audio_extensions()) {
    std::string path = stem.string() + extension;
    std::error_code error;
    // A symlink in the corpus is the user's own (a corpus is not a shared run folder); what it
    // names must be a file.
    if (std::filesystem::exists(path, error)) found.push_back(std::move(path));
  }
  AudioLookup lookup;
  if (found.size() == 1) {
    lookup.path = found.front();
    return lookup;
  }
  lookup.path = stem.string() + ".wav";
  if (found.empty()) {
    lookup.problem =
        fmt::format("missing audio: no file '{}' (nor .flac, .ogg or .opus)", lookup.path);
  } else {
    lookup.problem = fmt::format(
        "ambiguous audio: {} files for utterance {} ('{}'); keep one per id in {}", found.size(),
        id, fmt::join(found, "', '"), (std::filesystem::path(corpus_dir) / "wavs").string());
  }
  return lookup;
}

}  // namespace tts::data
