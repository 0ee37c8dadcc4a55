// The utterances of a corpus, whatever its layout (config `data.corpus`, docs/corpora.md): each
// with its id, speaker, transcript and audio file, and every input that cannot be used as a
// problem naming where it is and why, never silently dropped.
//
//   ljspeech  DIR/metadata.csv (`ID|raw|normalized`) and DIR/wavs/ID.{wav,flac,ogg,opus}; one
//             speaker, `data.speaker` or the folder's name
//   vctk      DIR/txt/SPK/ID.txt and DIR/wav48*/SPK/ID.{wav,flac} or ID_mic1.flac (VCTK 0.80 and
//             0.92; with both microphones, mic1 is read)
//   libritts  DIR/SPK/CHAPTER/ID.wav with ID.normalized.txt (or ID.original.txt)
//   csv       DIR/`data.csv_file`, columns as `data.csv_columns` names them (path, text, speaker,
//             id, ignore), separated by `data.csv_delimiter`; the path is relative to DIR
//
// A corpus is the user's own folder: links in it are followed (what they name must be a regular
// file), but every path a table names must stay inside DIR.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tts/config/data_options.h"

namespace tts::data {

struct CorpusEntry {
  int64_t line = 0;     // line of the corpus's table (ljspeech, csv); 0 when a file per utterance
  std::string id;       // unique in the corpus; names the store's files
  std::string speaker;  // a name that can name a file
  std::string text;     // as the corpus has it (cleaned later)
  std::string audio;    // the audio file's path
};

struct CorpusProblem {
  int64_t line = 0;    // as CorpusEntry::line
  std::string id;      // the utterance's id, or what stands for it (a line's start, a file's name)
  std::string reason;  // "category: details", naming the file
};

struct Corpus {
  std::vector<CorpusEntry> entries;     // in the corpus's order, ids unique
  std::vector<CorpusProblem> problems;  // in the corpus's order
  int64_t inputs() const { return static_cast<int64_t>(entries.size() + problems.size()); }
};

// The layout `dir` has, judged from its top folders: metadata.csv (LJSpeech), txt/ with wav48*/
// (VCTK), SPEAKER/CHAPTER/ID.normalized.txt (LibriTTS); nullopt when none (a CSV corpus names
// its own files). Looks at a few dozen entries, never reads a file.
std::optional<config::CorpusLayout> layout_of(const std::string& dir);

// Reads the corpus in `dir` laid out as `options.corpus` says; a folder that has another layout's
// shape (layout_of) is refused naming that layout and the --corpus to add. Throws UsageError when
// `dir` is not a corpus of that layout at all (naming what is missing and the layouts), never for
// one bad utterance: those are problems.
Corpus read_corpus(const config::DataOptions& options, const std::string& dir);

// Why `name` cannot be a speaker's name, or "" when it can: the store writes it in tables and
// may name files after it.
std::string speaker_name_problem(const std::string& name);

// The one-file-per-utterance layouts, in corpus_folders.cpp.
Corpus read_vctk_corpus(const std::string& dir);
Corpus read_libritts_corpus(const std::string& dir);

}  // namespace tts::data
