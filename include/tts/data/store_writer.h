// Writer of the feature store, the contract between `tts-train preprocess` and training:
//
//   FEATS/mels/ID.npy      [frames, n_mels] float32
//   FEATS/linear/ID.npy    [frames, n_fft/2+1] float32, only when audio.linear is on
//   FEATS/waveforms/ID.npy [n_samples] float32, the trimmed signal the mel was computed from, only
//                          when audio.waveforms is on (vocoders train on it)
//   FEATS/metadata.tsv     header "id n_frames n_samples mel linear waveform speaker text"
//                          (tab-separated); mel, linear and waveform are paths relative to FEATS
//                          ("-" when absent); speaker is the speaker's name; text is cleaned
//   FEATS/speakers.tsv     header "name id utterances minutes": every speaker of metadata.tsv,
//                          ids 0, 1, ... in the order of their names
//   FEATS/train.tsv, val.tsv  the same columns, a deterministic split of metadata.tsv's rows
//   FEATS/errors.tsv       header "line id reason": every input that was skipped
//   FEATS/features.yaml    tts_train_version, the audio and text sections (as dump_sections()
//                          writes them), counts {kept, skipped, frames, hours}, resampled_files
//
// Every file is written to a temporary name and renamed, so readers never see a partial file.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tts/config/config.h"

namespace tts::audio {
struct Features;
}

namespace tts::data {

struct StoreRow {
  std::string id;
  int64_t n_frames = 0;
  int64_t n_samples = 0;
  std::string mel;       // relative to the store: "mels/ID.npy"
  std::string linear;    // "linear/ID.npy", or "-"
  std::string waveform;  // "waveforms/ID.npy", or "-"
  std::string text;      // cleaned
  std::string speaker;   // the speaker's name
};

// A speaker of the store: `id` is its index in the store's names, sorted.
struct StoreSpeaker {
  std::string name;
  int64_t id = 0;
  int64_t utterances = 0;
  double minutes = 0.0;
};

struct StoreError {
  int64_t line = 0;  // line of the corpus's table; 0 for a corpus of one file per utterance
  std::string id;
  std::string reason;
};

struct StoreCounts {
  int64_t kept = 0;
  int64_t skipped = 0;
  int64_t frames = 0;
  double hours = 0.0;
  int64_t resampled_files = 0;
};

// Where a store's utterances came from: the corpus folder (absolute) and its layout, recorded in
// features.yaml so that the commands after training (gta, evaluate) and their fixes find the
// corpus without being told again.
struct StoreSource {
  config::CorpusLayout layout = config::CorpusLayout::kLjspeech;
  std::string folder;
};

struct Split {
  std::vector<StoreRow> train;
  std::vector<StoreRow> val;
};

// A deterministic split: `val_size` rows (a count >= 1, or a fraction < 1 of the rows, rounded)
// chosen by a seeded hash of each id, so the choice depends only on (ids, speakers, val_size,
// seed), not on row order or the number of workers. At least one row stays in train. With several
// speakers the count is shared among them in proportion to their rows (largest remainders, each
// going to a speaker with a row to spare, so that the count is met whenever the speakers can), and
// every speaker with two rows or more gives at least one (so validation hears every voice) and
// keeps at least one for training. Both keep `rows`' order.
Split split_train_val(const std::vector<StoreRow>& rows, double val_size, int64_t seed);

// The text of metadata.tsv (also train.tsv and val.tsv) for `rows`, header included. Tabs and
// line breaks inside text become spaces.
std::string format_store_tsv(const std::vector<StoreRow>& rows);

// The speakers of the utterances of `lists` (vectors of StoreRow or Utterance: anything with a
// `speaker` name and `n_samples`) with their counts (minutes at `sample_rate`), ids in name order.
// The one count of every store's speakers: speakers.tsv, FeatureStore::speakers() and store_check.
template <typename... Lists>
std::vector<StoreSpeaker> count_speakers(int sample_rate, const Lists&... lists) {
  std::map<std::string, StoreSpeaker> by_name;
  const auto count = [&](const auto& list) {
    for (const auto& row : list) {
      StoreSpeaker& speaker = by_name[row.speaker];
      speaker.name = row.speaker;
      ++speaker.utterances;
      speaker.minutes += static_cast<double>(row.n_samples) / sample_rate / 60;
    }
  };
  (count(lists), ...);
  std::vector<StoreSpeaker> speakers;
  for (auto& [name, speaker] : by_name) {
    speaker.id = static_cast<int64_t>(speakers.size());
    speakers.push_back(speaker);
  }
  return speakers;
}

// The text of speakers.tsv, header included.
std::string format_speakers_tsv(const std::vector<StoreSpeaker>& speakers);

// The text of errors.tsv, header included.
std::string format_errors_tsv(const std::vector<StoreError>& errors);

// The text of features.yaml.
std::string format_features_yaml(const config::Config& config, const StoreCounts& counts,
                                 const std::optional<StoreSource>& source = std::nullopt);

class StoreWriter {
 public:
  // Creates `dir`, dir/mels and, when asked, dir/linear and dir/waveforms. Throws tts::Error.
  StoreWriter(std::string dir, bool with_linear, bool with_waveforms = false);

  const std::string& dir() const { return dir_; }
  bool with_linear() const { return with_linear_; }
  bool with_waveforms() const { return with_waveforms_; }
  static std::string mel_path(const std::string& id) { return "mels/" + id + ".npy"; }
  static std::string linear_path(const std::string& id) { return "linear/" + id + ".npy"; }
  static std::string waveform_path(const std::string& id) { return "waveforms/" + id + ".npy"; }

  // Writes the utterance's arrays (atomically) and returns its row, whose speaker the caller sets.
  // Thread-safe (one id per call). Throws tts::Error when `features` lack a linear spectrogram or
  // waveform the store needs, or a write fails.
  StoreRow write_utterance(const std::string& id, const audio::Features& features,
                           const std::string& text) const;

  // metadata.tsv, train.tsv and val.tsv, and speakers.tsv.
  void write_metadata(const std::vector<StoreRow>& rows, const Split& split,
                      const std::vector<StoreSpeaker>& speakers) const;
  void write_errors(const std::vector<StoreError>& errors) const;
  void write_features_yaml(const config::Config& config, const StoreCounts& counts,
                           const std::optional<StoreSource>& source = std::nullopt) const;

  // Removes features.yaml and the tables, marking the store incomplete while it is rewritten.
  void remove_tables() const;
  // Removes temporary files ("ID.npy.tmp.PID") that a killed run left behind.
  void remove_temporaries() const;

 private:
  std::string dir_;
  bool with_linear_;
  bool with_waveforms_;
};

}  // namespace tts::data
