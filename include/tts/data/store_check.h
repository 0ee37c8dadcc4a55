// `tts-train data check`: every check that training makes (settings against the config, the
// utterance lists, each .npy file's dtype, rank, bins, frames and size), plus a scan of every
// value for NaN/Inf, over the whole store at once, collecting every problem instead of stopping
// at the first.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tts/config/config.h"

namespace tts::data {

// One speaker's utterances in metadata.tsv, and how the split shares them.
struct SpeakerCounts {
  std::string name;
  int64_t utterances = 0;
  int64_t train = 0;
  int64_t val = 0;
  double minutes = 0.0;  // of audio, at the store's sample rate
};

struct StoreCheckReport {
  std::vector<SpeakerCounts> speakers;  // in name order
  int64_t utterances = 0;             // distinct utterances in metadata.tsv, train.tsv and val.tsv
  int64_t files = 0;                  // .npy files checked
  int64_t too_long = 0;               // utterances that data.max_frames will drop (not a problem)
  std::vector<std::string> problems;  // each names the file and, where there is one, the utterance

  bool ok() const { return problems.empty(); }
};

// Checks the store `dir` against `config`. Never throws for a problem in the store; throws only
// for a failure to report (none expected).
StoreCheckReport check_store(const std::string& dir, const config::Config& config);

}  // namespace tts::data
