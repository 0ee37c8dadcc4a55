// Reader of LJSpeech-1.1-format corpora: DIR/metadata.csv and DIR/wavs/ID.wav (or .flac, .ogg,
// .opus).
//
// metadata.csv has one utterance per line, `ID|raw transcript|normalized transcript`, separated
// by '|' with no quoting (quote characters occur inside the text and are kept). The normalized
// column is used when present and not blank, else the raw one. Lines that cannot be used are
// reported as problems, never silently dropped; blank lines are ignored.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tts::data {

struct MetadataEntry {
  int64_t line = 0;  // 1-based line number in metadata.csv
  std::string id;
  std::string text;  // the normalized column, or the raw one when that is missing or blank
};

struct MetadataProblem {
  int64_t line = 0;
  std::string id;  // the utterance id, or for a malformed line the start of its text
  std::string reason;
};

struct Metadata {
  std::vector<MetadataEntry> entries;     // in file order, ids unique
  std::vector<MetadataProblem> problems;  // in file order
};

// Parses metadata.csv text. Problems: a line without 2 or 3 columns (the count found is given),
// an empty id, an id that cannot be a file name (contains '/', whitespace, or is "." or ".."), a
// duplicate id (the first occurrence is kept; the line of the first is given). A UTF-8 byte-order
// mark and Windows line ends are accepted.
Metadata parse_ljspeech_metadata(const std::string& text);

// Reads DIR/metadata.csv; throws tts::Error naming the file when it is missing or unreadable.
Metadata read_ljspeech_metadata(const std::string& corpus_dir);

// The audio extensions an LJSpeech-format corpus may use, in the order they are looked for:
// .wav, .flac, .ogg (Vorbis), .opus. libsndfile reads each by its content.
const std::vector<std::string>& ljspeech_audio_extensions();

// Where utterance ID's audio is: DIR/wavs/ID with the one of ljspeech_audio_extensions() that
// exists (`path`), or why none can be used (`problem`: no file with any of them, naming
// DIR/wavs/ID.*, or two of them at once, naming both: which one was meant cannot be guessed). With
// a problem, `path` is DIR/wavs/ID.wav (what other frameworks' filelists name).
struct AudioLookup {
  std::string path;
  std::string problem;
};
AudioLookup find_ljspeech_audio(const std::string& corpus_dir, const std::string& id);

}  // namespace tts::data
