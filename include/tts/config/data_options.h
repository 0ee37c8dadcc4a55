// Config section `data`: corpus splitting, filtering, loading and batching.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tts/config/field.h"

namespace tts::config {

// What the loader does with a feature file that fails its checks.
enum class OnBadFile { kSkip, kError };
TTS_CHOICE_NAMES(OnBadFile, {OnBadFile::kSkip, "skip"}, {OnBadFile::kError, "error"});

// How `tts-train preprocess` finds a corpus's utterances, speakers and transcripts (the
// layouts are described in docs/corpora.md).
enum class CorpusLayout { kLjspeech, kVctk, kLibritts, kCsv };
TTS_CHOICE_NAMES(CorpusLayout, {CorpusLayout::kLjspeech, "ljspeech"}, {CorpusLayout::kVctk, "vctk"},
                 {CorpusLayout::kLibritts, "libritts"}, {CorpusLayout::kCsv, "csv"});

// Ceilings no real corpus reaches: these numbers size what the loader holds in memory.
// Seconds of audio per utterance: training clips last seconds; 600 s is the audio reader's limit.
inline constexpr double kMaxUtteranceSeconds = 600;
// Mel frames per utterance (data.max_frames): 600 s at a 256-sample hop and 22,050 Hz is ~52,000.
inline constexpr int kMaxUtteranceFrames = 1000000;
// Symbols (characters or phonemes) per utterance, and per second of its audio: speech runs at 10
// to 25 symbols a second (LJSpeech's sentences: about 15), so an honest 600 s clip has about
// 15,000; a transcript past these is not the clip's (a corpus made to exhaust the memory that
// training sizes by the longest text). A clip of under a second may carry kSymbolAllowance more.
inline constexpr int kMaxSymbolsPerUtterance = 20000;
inline constexpr double kMaxSymbolsPerSecond = 60;
inline constexpr int kSymbolAllowance = 50;
// Batches loaded ahead and pooled for sorting: 4 and 32 by default.
inline constexpr int kMaxPrefetchBatches = 1024;
inline constexpr int kMaxSortPoolBatches = 65536;
// Loader threads: one or two per core.
inline constexpr int kMaxLoaderWorkers = 1024;

struct DataOptions {
  // Each field's meaning is documented once, in visit(); dumped configs carry it as a comment.
  CorpusLayout corpus = CorpusLayout::kLjspeech;
  std::string speaker;
  std::string csv_file = "metadata.csv";
  std::vector<std::string> csv_columns{"path", "speaker", "text"};
  std::string csv_delimiter = "|";
  bool csv_header = false;
  double min_speaker_minutes = 1.0;
  double val_size = 100;
  int64_t split_seed = 1234;
  double max_seconds = 15.0;
  double max_skip_fraction = 0.1;
  int max_frames = 0;
  int num_workers = 2;
  int prefetch_batches = 4;
  int sort_pool_batches = 32;
  OnBadFile on_bad_file = OnBadFile::kSkip;
  bool pin_memory = true;

  template <class V>
  void visit(V& v) {
    v("corpus", corpus,
      "the corpus's layout: ljspeech (metadata.csv + wavs/), vctk (txt/SPK/ID.txt + wav48*/SPK/), "
      "libritts (SPK/CHAPTER/ID.wav + ID.normalized.txt) or csv (data.csv_file)");
    v("speaker", speaker,
      "the speaker of an ljspeech-layout corpus (one speaker); empty = the corpus folder's name");
    v("csv_file", csv_file, "corpus: csv: the table, relative to the corpus folder");
    v("csv_columns", csv_columns,
      "corpus: csv: the table's columns in order: path, text, and optionally speaker, id, ignore");
    v("csv_delimiter", csv_delimiter, "corpus: csv: the one character between columns");
    v("csv_header", csv_header, "corpus: csv: the table's first line names its columns (skipped)");
    v("min_speaker_minutes", min_speaker_minutes,
      "preprocess names, in a warning, the speakers of a corpus of several with less audio than "
      "this, minutes");
    v("val_size", val_size, "validation split: a count of utterances (>= 1) or a fraction (< 1)");
    v("split_seed", split_seed, "seed of the deterministic train/validation split");
    v("max_seconds", max_seconds, "preprocess skips clips longer than this (after trimming), s");
    v("max_skip_fraction", max_skip_fraction,
      "preprocess fails when more than this fraction of inputs was skipped");
    v("max_frames", max_frames, "training drops utterances with more frames; 0 = no limit");
    v("num_workers", num_workers, "background loader threads per rank");
    v("prefetch_batches", prefetch_batches, "batches loaded ahead of the training step");
    v("sort_pool_batches", sort_pool_batches,
      "the sampler sorts by length within pools of this many global batches");
    v("on_bad_file", on_bad_file, "a feature file that fails its checks: skip (counted) or error");
    v("pin_memory", pin_memory,
      "on CUDA, load batches into page-locked memory for non-blocking copies");
  }
  void validate() const;
};

}  // namespace tts::config
