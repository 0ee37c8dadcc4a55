// `tts-train preprocess`: a corpus (any layout of tts/data/corpus.h) -> a feature store (see
// store_writer.h).
//
// Utterances are processed in parallel by `workers` threads (each runs torch single-threaded, so
// the output does not depend on the number of workers). The run is resumable: every file is
// written under a temporary name and renamed, and FEATS/.preprocess/ records the audio settings
// and each finished utterance (with its WAV's size and modification time). A rerun reuses an
// utterance whose features exist and whose WAV and audio settings are unchanged, and recomputes
// everything when the audio settings changed (saying which). Transcripts are always re-cleaned.
//
// Bad input never stops the run: malformed lines, duplicate ids, missing or unreadable WAVs,
// transcripts that are empty after cleaning, audio shorter than a frame or longer than
// data.max_seconds are written to errors.tsv and counted in the summary.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <string>

#include "tts/config/config.h"

namespace tts::data {

struct PreprocessRequest {
  std::string input_dir;   // the corpus, laid out as config.data.corpus says
  std::string output_dir;  // the feature store
  int workers = 0;         // threads; 0 = one per core
  // When set and it becomes true (e.g. from a SIGINT handler), no new utterance is started; the
  // finished ones are recorded for the next run and the summary says `interrupted`.
  const std::atomic<bool>* stop = nullptr;
};

struct PreprocessSummary {
  int64_t inputs = 0;  // utterances and problems the corpus reader found
  int64_t kept = 0;
  int64_t speakers = 0;  // of the kept utterances
  int64_t reused = 0;    // of `kept`, taken over from an earlier run
  int64_t skipped = 0;
  std::map<std::string, int64_t> skipped_by_reason;  // "missing wav" -> 3
  int64_t frames = 0;
  double hours = 0.0;
  int64_t resampled_files = 0;
  bool interrupted = false;
  double seconds = 0.0;  // wall time of the run
};

// Runs preprocessing and logs the summary. Unless interrupted, writes metadata.tsv, train.tsv,
// val.tsv and errors.tsv; then throws tts::Error when nothing was kept or when more than
// data.max_skip_fraction of the inputs were skipped, else writes features.yaml (so a store
// without it is incomplete or failed). Throws UsageError for a bad request or config and
// tts::Error when the corpus cannot be read or the store cannot be written.
PreprocessSummary preprocess_corpus(const config::Config& config, const PreprocessRequest& request);

}  // namespace tts::data
