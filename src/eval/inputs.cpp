#include "tts/eval/inputs.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <system_error>

#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/core/printable.h"

namespace tts::eval {
namespace fsys = std::filesystem;

namespace {

bool is_audio(const fsys::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".wav" || ext == ".flac" || ext == ".ogg";
}

// Whether `inner` (both canonical) lies inside `folder`.
bool inside(const fsys::path& folder, const fsys::path& inner) {
  auto f = folder.begin();
  auto i = inner.begin();
  for (; f != folder.end(); ++f, ++i) {
    if (i == inner.end() || *f != *i) return false;
  }
  return true;
}

}  // namespace

std::map<std::string, std::string> find_clips(const std::string& folder,
                                              const std::string& option) {
  std::error_code ec;
  TTS_USAGE_CHECK(fsys::is_directory(folder, ec),
                  "{}: expected a folder of audio clips (.wav/.flac/.ogg named by id), found {}",
                  option,
                  fsys::exists(folder, ec) ? printable(folder) + ", which is not a folder"
                                           : "no " + printable(folder));
  const fsys::path root = fsys::canonical(folder, ec);
  TTS_CHECK(!ec, "{} {}: cannot resolve the folder: {}", option, printable(folder), ec.message());
  std::map<std::string, std::string> clips;
  fsys::directory_iterator it(root, ec);
  TTS_CHECK(!ec, "{} {}: cannot list the folder: {}", option, printable(folder), ec.message());
  for (; it != fsys::directory_iterator(); it.increment(ec)) {
    TTS_CHECK(!ec, "{} {}: listing failed: {}", option, printable(folder), ec.message());
    const fsys::path path = it->path();
    if (!is_audio(path)) continue;
    std::string file = path.string();
    if (it->is_symlink(ec)) {
      const fsys::path target = fsys::canonical(path, ec);
      TTS_CHECK(!ec && inside(root, target),
                "{}: a symlink {}; expected the clips inside {} {}: copy the file into the folder",
                printable(file),
                ec ? "whose target does not exist"
                   : "to " + printable(target.string()) + ", outside the folder",
                option, printable(folder));
      file = target.string();
    }
    const std::string id = path.stem().string();
    const auto [found, added] = clips.emplace(id, file);
    TTS_CHECK(added, "{} {}: two clips of id {}: {} and {}; keep one", option, printable(folder),
              printable(id), printable(found->second), printable(file));
    TTS_CHECK(static_cast<int64_t>(clips.size()) <= kMaxClipsPerFolder,
              "{} {}: more than {} clips; evaluate the folder in parts", option, printable(folder),
              kMaxClipsPerFolder);
  }
  return clips;
}

std::map<std::string, std::string> read_id_table(const std::string& path, const std::string& what) {
  const FileDescriptor fd = open_regular_file_for_read(path, Symlinks::kFollow);
  const int64_t size = file_size(fd, path);
  TTS_CHECK(size <= kMaxTableBytes,
            "{}: {} bytes; expected a table of `id<TAB>{}` lines of at most {} bytes",
            printable(path), size, what, kMaxTableBytes);
  const std::string text = read_at(fd, path, 0, size);
  std::map<std::string, std::string> table;
  size_t start = 0;
  for (int64_t line_number = 1; start < text.size(); ++line_number) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    const size_t separator = line.find_first_of("\t|");
    TTS_CHECK(separator != std::string::npos,
              "{} line {}: expected `id<TAB>{}` (or `id|{}`), found no tab or '|' in {}",
              printable(path), line_number, what, what, printable(line.substr(0, 80)));
    const std::string id = line.substr(0, separator);
    const size_t last = line.find_last_of(line[separator]);
    const std::string value = line.substr(last + 1);
    TTS_CHECK(!id.empty() && !value.empty(),
              "{} line {}: expected an id and a {}, found an empty {}", printable(path),
              line_number, what, id.empty() ? "id" : what);
    TTS_CHECK(table.emplace(id, value).second, "{} line {}: id {} is given twice; keep one line",
              printable(path), line_number, printable(id));
  }
  return table;
}

}  // namespace tts::eval
