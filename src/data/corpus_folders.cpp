// The corpora of one file per utterance: VCTK's and LibriTTS's layouts (tts/data/corpus.h).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string_view>

#include "corpus_text.h"
#include "tts/core/error.h"
#include "tts/core/logging.h"
#include "tts/data/corpus.h"
#include "tts/data/ljspeech.h"

namespace tts::data {
namespace fs = std::filesystem;
namespace {

// A transcript holds one sentence: a file past this is not one.
constexpr int64_t kMaxTranscriptFileBytes = 64 << 10;

// One of the audio extensions the readers take (ljspeech_audio_extensions()).
bool is_audio_extension(const std::string& extension) {
  const std::vector<std::string>& extensions = ljspeech_audio_extensions();
  return std::find(extensions.begin(), extensions.end(), extension) != extensions.end();
}

struct Listing {
  std::vector<fs::path> folders;
  std::vector<fs::path> files;
  std::string problem;  // why the folder could not be listed
};

// The entries of `dir`, sorted (links followed: a corpus is the user's own folder).
Listing list_folder(const fs::path& dir) {
  Listing listing;
  std::error_code error;
  fs::directory_iterator it(dir, error);
  for (; !error && it != fs::directory_iterator(); it.increment(error)) {
    std::error_code kind;
    if (it->is_directory(kind)) {
      listing.folders.push_back(it->path());
    } else if (it->path().filename().string().rfind('.', 0) != 0) {  // not a hidden file
      listing.files.push_back(it->path());
    }
  }
  if (error) {
    listing.problem =
        fmt::format("unreadable folder: cannot list '{}': {}", dir.string(), error.message());
  }
  std::sort(listing.folders.begin(), listing.folders.end());
  std::sort(listing.files.begin(), listing.files.end());
  return listing;
}

// A VCTK corpus's top: its wav48* audio folders and whether it has txt/.
struct VctkTop {
  std::vector<fs::path> audio_roots;
  bool has_txt = false;
};

VctkTop vctk_top(const Listing& top) {
  VctkTop out;
  for (const auto& folder : top.folders) {
    const std::string name = folder.filename().string();
    if (name.rfind("wav48", 0) == 0) out.audio_roots.push_back(folder);
    out.has_txt = out.has_txt || name == "txt";
  }
  return out;
}

constexpr std::string_view kNormalizedText = ".normalized.txt";

// LibriTTS's transcript of an utterance: ID.normalized.txt.
bool is_normalized_transcript(const std::string& name) {
  return name.size() > kNormalizedText.size() &&
         name.compare(name.size() - kNormalizedText.size(), kNormalizedText.size(),
                      kNormalizedText) == 0;
}

// A transcript file's text, its line breaks as spaces and trimmed; "" with `problem` set when
// it cannot be read.
std::string read_transcript(const fs::path& path, std::string& problem) {
  try {
    std::string text = read_bounded_text(path.string(), kMaxTranscriptFileBytes);
    if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.erase(0, 3);
    std::string joined;  // the file's lines as one, each break one space
    for (char c : text) {
      const bool space = c == '\n' || c == '\r' || c == '\t' || c == ' ';
      if (!space || (!joined.empty() && joined.back() != ' ')) joined += space ? ' ' : c;
    }
    return trim(joined);
  } catch (const Error& e) {
    problem = fmt::format("bad transcript: {}", e.what());
    return "";
  }
}

// Collects entries and problems, refusing a second utterance with an id already taken.
class Collector {
 public:
  void add(std::string id, std::string speaker, std::string text, const fs::path& audio) {
    if (std::string why = id_problem(id); !why.empty()) return problem(id, why);
    auto [previous, inserted] = audio_of_.emplace(id, audio.string());
    if (!inserted) {
      return problem(id, fmt::format("duplicate id: '{}' and '{}' are both utterance {}; the first "
                                     "is kept",
                                     previous->second, audio.string(), id));
    }
    corpus_.entries.push_back(
        {0, std::move(id), std::move(speaker), std::move(text), audio.string()});
  }
  void problem(const std::string& id, std::string reason) {
    corpus_.problems.push_back({0, id, std::move(reason)});
  }
  // False (with a problem) when `name` cannot be a speaker's.
  bool speaker_ok(const std::string& name) {
    std::string why = speaker_name_problem(name);
    if (!why.empty()) problem(name, why);
    return why.empty();
  }
  Corpus take() { return std::move(corpus_); }

 private:
  Corpus corpus_;
  std::map<std::string, std::string> audio_of_;
};

void log_ignored(const std::string& dir, const std::vector<fs::path>& files) {
  if (files.empty()) return;
  std::vector<std::string> names;
  for (const auto& file : files) names.push_back(file.filename().string());
  log::get("data")->info("'{}': {} file{} at the top are not utterances and are not read: {}", dir,
                         files.size(), files.size() == 1 ? "" : "s", fmt::join(names, ", "));
}

// VCTK's audio of utterance `id` in `folder`: ID.wav or ID.flac (0.80), else ID_mic1.* then
// ID_mic2.* (0.92). "" with `problem` set when there is none, or two for the same microphone.
std::string vctk_audio(const std::set<std::string>& names, const fs::path& folder,
                       const std::string& id, std::string& problem) {
  for (const std::string suffix : {"", "_mic1", "_mic2"}) {
    std::vector<std::string> found;
    for (const std::string& extension : ljspeech_audio_extensions()) {
      if (names.count(id + suffix + extension) != 0) found.push_back(id + suffix + extension);
    }
    if (found.size() == 1) return (folder / found.front()).string();
    if (found.size() > 1) {
      problem = fmt::format("ambiguous audio: {} files for utterance {} in '{}' ({}); keep one",
                            found.size(), id, folder.string(), fmt::join(found, ", "));
      return "";
    }
  }
  problem = fmt::format("missing audio: no '{}/{}.wav' (nor .flac, nor {}_mic1.flac)",
                        folder.string(), id, id);
  return "";
}

// The utterance id a VCTK audio file belongs to: its stem without a microphone suffix.
std::string vctk_id_of(const fs::path& audio) {
  std::string stem = audio.stem().string();
  for (const std::string suffix : {"_mic1", "_mic2"}) {
    if (stem.size() > suffix.size() &&
        stem.compare(stem.size() - suffix.size(), suffix.size(), suffix) == 0) {
      return stem.substr(0, stem.size() - suffix.size());
    }
  }
  return stem;
}

// Reads VCTK speaker `speaker`'s folders of `text_root` and `audio_root` into `collector`.
void read_vctk_speaker(const std::string& speaker, const fs::path& text_root,
                       const fs::path& audio_root, Collector& collector) {
  const fs::path text_folder = text_root / speaker;
  const fs::path audio_folder = audio_root / speaker;
  const Listing texts = list_folder(text_folder);
  const Listing audio = list_folder(audio_folder);
  std::set<std::string> audio_names;
  for (const auto& file : audio.files) audio_names.insert(file.filename().string());
  std::set<std::string> transcribed;
  if (!fs::is_directory(text_folder)) {
    collector.problem(speaker, fmt::format("no transcripts: speaker {} has {} audio files in '{}' "
                                           "and no folder '{}'",
                                           speaker, audio.files.size(), audio_folder.string(),
                                           text_folder.string()));
    return;
  }
  if (!texts.problem.empty()) collector.problem(speaker, texts.problem);
  for (const auto& file : texts.files) {
    const std::string id = file.stem().string();
    if (file.extension() != ".txt") {
      collector.problem(id, fmt::format("not a transcript: '{}' (expected ID.txt)", file.string()));
      continue;
    }
    transcribed.insert(id);
    std::string problem;
    const std::string text = read_transcript(file, problem);
    const std::string path =
        problem.empty() ? vctk_audio(audio_names, audio_folder, id, problem) : "";
    if (!problem.empty()) {
      collector.problem(id, problem);
      continue;
    }
    collector.add(id, speaker, text, path);
  }
  for (const auto& file : audio.files) {
    if (!is_audio_extension(file.extension().string())) {
      collector.problem(file.stem().string(),
                        fmt::format("not audio: '{}' (expected .wav or .flac)", file.string()));
    } else if (transcribed.count(vctk_id_of(file)) == 0) {
      collector.problem(vctk_id_of(file),
                        fmt::format("no transcript: '{}' has no '{}/{}.txt'", file.string(),
                                    text_folder.string(), vctk_id_of(file)));
    }
  }
}

}  // namespace

std::optional<config::CorpusLayout> layout_of(const std::string& dir) {
  std::error_code error;
  if (fs::is_regular_file(fs::path(dir) / "metadata.csv", error)) {
    return config::CorpusLayout::kLjspeech;
  }
  const Listing top = list_folder(dir);
  const VctkTop vctk = vctk_top(top);
  if (vctk.has_txt && !vctk.audio_roots.empty()) return config::CorpusLayout::kVctk;
  // LibriTTS: SPEAKER/CHAPTER/ID.normalized.txt; a speaker's first chapter is enough to tell.
  for (const auto& speaker : top.folders) {
    const Listing chapters = list_folder(speaker);
    if (chapters.folders.empty()) continue;
    for (const auto& file : list_folder(chapters.folders.front()).files) {
      if (is_normalized_transcript(file.filename().string()))
        return config::CorpusLayout::kLibritts;
    }
  }
  return std::nullopt;
}

Corpus read_vctk_corpus(const std::string& dir) {
  const Listing top = list_folder(dir);
  const auto [audio_roots, has_txt] = vctk_top(top);
  TTS_USAGE_CHECK(has_txt && !audio_roots.empty(),
                  "'{}' is not a VCTK-layout corpus (data.corpus: vctk): expected txt/SPK/ID.txt "
                  "and wav48*/SPK/ID.wav (or ID_mic1.flac); found {}{}; check --input and "
                  "data.corpus",
                  dir, has_txt ? "txt/ but no wav48* folder" : "no txt/ folder",
                  top.problem.empty() ? "" : " (" + top.problem + ")");
  std::vector<std::string> root_names;
  for (const auto& root : audio_roots) root_names.push_back(root.filename().string());
  TTS_USAGE_CHECK(audio_roots.size() == 1,
                  "'{}' has {} audio folders ({}); which one to read cannot be guessed: move all "
                  "but one out of the corpus folder",
                  dir, audio_roots.size(), fmt::join(root_names, ", "));
  log_ignored(dir, top.files);
  const fs::path audio_root = audio_roots.front();
  const fs::path text_root = fs::path(dir) / "txt";

  Collector collector;
  const Listing text_speakers = list_folder(text_root);
  const Listing audio_speakers = list_folder(audio_root);
  if (!text_speakers.problem.empty()) collector.problem("txt", text_speakers.problem);
  if (!audio_speakers.problem.empty()) collector.problem(root_names[0], audio_speakers.problem);
  for (const auto& file : text_speakers.files) {
    collector.problem(file.filename().string(),
                      fmt::format("unreadable speaker folder: '{}' is not a folder; txt/ holds a "
                                  "folder per speaker",
                                  file.string()));
  }
  std::set<std::string> speakers;
  for (const auto& folder : text_speakers.folders) speakers.insert(folder.filename().string());
  for (const auto& folder : audio_speakers.folders) speakers.insert(folder.filename().string());

  for (const std::string& speaker : speakers) {
    if (!collector.speaker_ok(speaker)) continue;
    read_vctk_speaker(speaker, text_root, audio_root, collector);
  }
  return collector.take();
}

Corpus read_libritts_corpus(const std::string& dir) {
  const Listing top = list_folder(dir);
  TTS_USAGE_CHECK(top.problem.empty(), "{}", top.problem);
  log_ignored(dir, top.files);
  Collector collector;
  for (const auto& speaker_folder : top.folders) {
    const std::string speaker = speaker_folder.filename().string();
    if (!collector.speaker_ok(speaker)) continue;
    const Listing chapters = list_folder(speaker_folder);
    if (!chapters.problem.empty()) collector.problem(speaker, chapters.problem);
    for (const auto& file : chapters.files) {
      collector.problem(file.filename().string(),
                        fmt::format("not a chapter folder: '{}' (expected SPEAKER/CHAPTER/ID.wav)",
                                    file.string()));
    }
    for (const auto& chapter : chapters.folders) {
      const Listing files = list_folder(chapter);
      if (!files.problem.empty()) collector.problem(chapter.filename().string(), files.problem);
      std::set<std::string> names;
      for (const auto& file : files.files) names.insert(file.filename().string());
      for (const auto& file : files.files) {
        const std::string name = file.filename().string();
        const std::string extension = file.extension().string();
        const std::string id = file.stem().string();
        if (is_audio_extension(extension)) {
          std::string problem;
          std::string text;
          if (names.count(id + ".normalized.txt") != 0) {
            text = read_transcript(chapter / (id + ".normalized.txt"), problem);
          } else if (names.count(id + ".original.txt") != 0) {
            text = read_transcript(chapter / (id + ".original.txt"), problem);
          } else {
            problem = fmt::format("no transcript: '{}' has no '{}.normalized.txt' beside it",
                                  file.string(), id);
          }
          if (!problem.empty()) {
            collector.problem(id, problem);
          } else {
            collector.add(id, speaker, text, file);
          }
        } else if (is_normalized_transcript(name)) {
          const std::string utterance = name.substr(0, name.size() - kNormalizedText.size());
          bool has_audio = false;
          for (const std::string& audio : ljspeech_audio_extensions()) {
            has_audio = has_audio || names.count(utterance + audio) != 0;
          }
          if (!has_audio) {
            collector.problem(utterance,
                              fmt::format("missing audio: '{}' has no '{}.wav' beside it",
                                          file.string(), utterance));
          }
        }
        // ID.original.txt and the chapter's .tsv tables hold nothing the store needs.
      }
    }
  }
  Corpus corpus = collector.take();
  TTS_USAGE_CHECK(
      !corpus.entries.empty() || !corpus.problems.empty(),
      "'{}' is not a LibriTTS-layout corpus (data.corpus: libritts): no "
      "SPEAKER/CHAPTER/ID.wav with ID.normalized.txt under it; when it holds LibriTTS's "
      "subsets (train-clean-100/...), pass one subset as --input",
      dir);
  return corpus;
}

}  // namespace tts::data
