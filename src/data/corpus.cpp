#include "tts/data/corpus.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <unordered_map>

#include "corpus_text.h"
#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/data/ljspeech.h"

namespace tts::data {
namespace fs = std::filesystem;
namespace {

// The speaker of a one-speaker corpus: data.speaker, or the corpus folder's name made safe.
std::string single_speaker(const config::DataOptions& options, const std::string& dir) {
  if (!options.speaker.empty()) return options.speaker;
  std::string name = fs::path(dir).lexically_normal().filename().string();
  if (name.empty()) name = fs::absolute(dir).lexically_normal().parent_path().filename().string();
  for (char& c : name) {
    if (static_cast<unsigned char>(c) < 0x20 || c == ' ' || c == '\\' || c == 0x7f) c = '_';
  }
  return speaker_name_problem(name).empty() ? name : "speaker";
}

Corpus read_ljspeech_corpus(const config::DataOptions& options, const std::string& dir) {
  Metadata metadata = read_ljspeech_metadata(dir);
  const std::string speaker = single_speaker(options, dir);
  Corpus corpus;
  for (const auto& problem : metadata.problems) {
    corpus.problems.push_back({problem.line, problem.id, problem.reason});
  }
  for (auto& entry : metadata.entries) {
    AudioLookup audio = find_ljspeech_audio(dir, entry.id);
    if (!audio.problem.empty()) {
      corpus.problems.push_back({entry.line, entry.id, audio.problem});
      continue;
    }
    corpus.entries.push_back(
        {entry.line, std::move(entry.id), speaker, std::move(entry.text), std::move(audio.path)});
  }
  // Problems come from two passes: the tables keep the file's order.
  std::stable_sort(corpus.problems.begin(), corpus.problems.end(),
                   [](const CorpusProblem& a, const CorpusProblem& b) { return a.line < b.line; });
  return corpus;
}

// A path a table names, made a path under `dir`; "" with `problem` set when it would leave it.
std::string path_inside(const std::string& dir, const std::string& relative, std::string& problem) {
  const fs::path path(relative);
  bool escapes = relative.empty() || path.is_absolute();
  for (const auto& part : path) escapes = escapes || part == "..";
  if (escapes) {
    problem = fmt::format(
        "bad path: '{}' is not a path inside the corpus folder (relative, without '..')", relative);
    return "";
  }
  return (fs::path(dir) / path).string();
}

Corpus read_csv_corpus(const config::DataOptions& options, const std::string& dir) {
  std::string problem;
  const std::string table = path_inside(dir, options.csv_file, problem);
  TTS_USAGE_CHECK(problem.empty(), "data.csv_file: {}", problem);
  TTS_USAGE_CHECK(fs::is_regular_file(table),
                  "no '{}': a csv-layout corpus (data.corpus: csv) has the table data.csv_file "
                  "names, with the columns data.csv_columns names ({}); check --input and "
                  "data.csv_file",
                  table, fmt::join(options.csv_columns, options.csv_delimiter));
  const std::vector<std::string>& columns = options.csv_columns;
  auto column_of = [&](const char* name) {
    for (size_t c = 0; c < columns.size(); ++c) {
      if (columns[c] == name) return static_cast<int>(c);
    }
    return -1;
  };
  const int path_column = column_of("path");
  const int text_column = column_of("text");
  const int speaker_column = column_of("speaker");
  const int id_column = column_of("id");
  const std::string default_speaker = single_speaker(options, dir);

  Corpus corpus;
  std::unordered_map<std::string, int64_t> first_line;
  for_each_line(read_bounded_text(table), [&](int64_t line, const std::string& text) {
    if (line == 1 && options.csv_header) return;
    std::vector<std::string> fields = split_fields(text, options.csv_delimiter[0]);
    if (fields.size() != columns.size()) {
      corpus.problems.push_back(
          {line, excerpt(text),
           fmt::format("malformed line: expected {} '{}'-separated columns ({}), found {}",
                       columns.size(), options.csv_delimiter,
                       fmt::join(columns, options.csv_delimiter), fields.size())});
      return;
    }
    const std::string relative = trim(fields[static_cast<size_t>(path_column)]);
    std::string id = id_column >= 0 ? trim(fields[static_cast<size_t>(id_column)])
                                    : fs::path(relative).stem().string();
    if (std::string why = id_problem(id); !why.empty()) {
      corpus.problems.push_back({line, excerpt(text), why});
      return;
    }
    const std::string speaker =
        speaker_column >= 0 ? trim(fields[static_cast<size_t>(speaker_column)]) : default_speaker;
    if (std::string why = speaker_name_problem(speaker); !why.empty()) {
      corpus.problems.push_back({line, id, why});
      return;
    }
    auto [previous, inserted] = first_line.emplace(id, line);
    if (!inserted) {
      corpus.problems.push_back(
          {line, id,
           fmt::format("duplicate id: first on line {}, which is kept", previous->second)});
      return;
    }
    std::string bad_path;
    std::string audio = path_inside(dir, relative, bad_path);
    if (!bad_path.empty()) {
      corpus.problems.push_back({line, id, bad_path});
      return;
    }
    std::error_code error;
    if (!fs::is_regular_file(audio, error)) {
      corpus.problems.push_back(
          {line, id,
           fmt::format("missing audio: no file '{}' (line {} of '{}')", audio, line, table)});
      return;
    }
    corpus.entries.push_back(
        {line, std::move(id), speaker, fields[static_cast<size_t>(text_column)], std::move(audio)});
  });
  return corpus;
}

}  // namespace

Corpus read_corpus(const config::DataOptions& options, const std::string& dir) {
  std::error_code error;
  TTS_USAGE_CHECK(fs::is_directory(dir, error), "no corpus folder '{}'; check --input", dir);
  // A corpus of another layout than the one asked for: name the one seen and the flag.
  const std::optional<config::CorpusLayout> seen = layout_of(dir);
  TTS_USAGE_CHECK(!seen || *seen == options.corpus || options.corpus == config::CorpusLayout::kCsv,
                  "'{}' has {}'s layout, but it is read as data.corpus: {}: add --corpus {} (or "
                  "set data.corpus: {}; docs/corpora.md)",
                  dir, *seen, options.corpus, *seen, *seen);
  switch (options.corpus) {
    case config::CorpusLayout::kLjspeech:
      return read_ljspeech_corpus(options, dir);
    case config::CorpusLayout::kVctk:
      return read_vctk_corpus(dir);
    case config::CorpusLayout::kLibritts:
      return read_libritts_corpus(dir);
    case config::CorpusLayout::kCsv:
      return read_csv_corpus(options, dir);
  }
  throw Error("unknown corpus layout");
}

}  // namespace tts::data
