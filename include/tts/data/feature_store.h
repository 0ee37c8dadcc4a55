// Reader of the feature store FEATS/ that `tts-train preprocess` writes:
//   metadata.tsv, train.tsv, val.tsv  header `id n_frames n_samples mel linear waveform speaker
//                                     text` (tab-separated; mel/linear/waveform relative to FEATS
//                                     or `-`; text already cleaned; tables without the speaker or
//                                     waveform columns, from older stores, are read too)
//   mels/ID.npy                       [frames, n_mels] float32
//   linear/ID.npy                     [frames, n_fft/2+1] float32 (when audio.linear)
//   waveforms/ID.npy                  [n_samples] float32 (when audio.waveforms)
//   features.yaml                     tts_train_version, the `audio` and `text` sections that made
//                                     the features, counts, resampled_files
// Opening a store compares its settings with the training config and refuses any difference that
// changes the targets' meaning or shape, listing every mismatch with both values and the fix.
#pragma once

#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "tts/config/config.h"
#include "tts/data/store_writer.h"

namespace tts::data {

struct Utterance {
  std::string id;
  int64_t n_frames = 0;
  std::string mel_path;       // absolute
  std::string linear_path;    // absolute, or empty when the store has no linear targets
  std::string waveform_path;  // absolute, or empty when the store keeps no waveforms
  int64_t n_samples = 0;      // samples of the trimmed waveform the mel was computed from
  std::string text;           // cleaned text
  std::string speaker;        // the speaker's name; "" in stores written before speakers were kept
};

class FeatureStore {
 public:
  // Reads features.yaml, train.tsv and val.tsv of `dir`; checks the store's audio/text settings
  // against `config` (see settings_mismatches) and that the store has linear targets when
  // config.audio.linear or config.model.predict_linear; throws UsageError listing every mismatch.
  // Utterances longer than config.data.max_frames (when > 0) are dropped here, with a logged count.
  // Throws tts::Error for a missing or malformed file (naming the file and line).
  static FeatureStore open(const std::string& dir, const config::Config& config);

  const std::vector<Utterance>& train() const { return train_; }
  const std::vector<Utterance>& val() const { return val_; }
  const std::string& dir() const { return dir_; }
  // The audio and text sections recorded in features.yaml (other sections are defaults).
  const config::Config& store_config() const { return store_config_; }
  const std::string& version() const { return version_; }  // tts_train_version of the writer
  int n_mels() const { return store_config_.audio.n_mels; }
  int n_linear() const { return store_config_.audio.n_linear(); }
  bool has_linear() const { return store_config_.audio.linear; }
  // The speakers of train.tsv and val.tsv (before data.max_frames drops any), ids in name order;
  // one (named "" in an older store) for a one-speaker corpus.
  const std::vector<StoreSpeaker>& speakers() const { return speakers_; }

 private:
  std::string dir_;
  std::string version_;
  config::Config store_config_;
  std::vector<Utterance> train_;
  std::vector<Utterance> val_;
  std::vector<StoreSpeaker> speakers_;
};

// The settings recorded in `dir`/features.yaml. Throws tts::Error naming the file when it is
// missing or malformed.
struct StoreSettings {
  std::string version;
  std::string phonemizer;  // "espeak-ng 1.51" for a store of phonemes; "" otherwise
  config::Config config;   // audio and text as recorded; other sections default
  // The corpus it was made from (stores of older versions, and gta's, do not say).
  std::optional<StoreSource> source;
};
StoreSettings read_store_settings(const std::string& dir);

// The settings file of a mel written outside a store (STEM.yaml beside STEM.npy: the audio
// section it was made with), which inference::mel_settings_of reads back.
std::string mel_settings_path(const std::string& mel_path);
void write_mel_settings(const std::string& mel_path, const config::Config& config);
// Whether `path` is such a file (it starts with the line write_mel_settings writes first), not
// any other YAML file that happens to sit beside a mel.
bool is_mel_settings_file(const std::string& path);

// One line per setting that differs between the store and the training config, each naming both
// values and the fix, e.g. "features in FEATS were made with audio.n_fft=2048 (linear targets have
// 1025 bins) but the config says audio.n_fft=1024 (513 bins): re-run tts-train preprocess with this
// config, or set audio.n_fft: 2048". Compared: sample_rate, n_fft, hop_length, win_length, center,
// pad_mode, n_mels, fmin, fmax, mel_scale, mel_norm, preemphasis, magnitude_power, compression
// and its fields (log: log_floor; db: min_level_db, ref_level_db, signal_normalization, symmetric,
// max_abs_value, allow_clipping), linear (needed by audio.linear or model.predict_linear),
// text.symbol_set and text.cleaners. Empty when the store fits the config.
// `source`, the corpus the store records, makes the fixes runnable as they are (--input, --corpus).
std::vector<std::string> settings_mismatches(
    const config::Config& store, const config::Config& config, const std::string& store_dir,
    const std::optional<StoreSource>& source = std::nullopt);

// Reads one utterance list (metadata.tsv, train.tsv or val.tsv) of the store `dir`; paths become
// absolute. Throws tts::Error naming the file and line of a malformed row.
std::vector<Utterance> read_utterance_list(const std::string& dir, const std::string& file_name);

// "PATH (utterance ID): REASON" for a feature file that could not be read; REASON is the error's
// message without a leading "PATH: ".
std::string feature_file_error(const std::string& path, const std::string& id,
                               const std::exception& error);

// Checks the .npy header of a feature file against what metadata.tsv and the config promise:
// float32 ('<f4'), 2-D [frames, bins], `bins` columns, `frames` rows, data not truncated. Returns
// the problem ("mels/LJ001-0001.npy (utterance LJ001-0001): expected 80 bins, found 81"), or
// nullopt when the file is fine. Never throws.
std::optional<std::string> check_feature_file(const std::string& path, const std::string& id,
                                              int64_t bins, int64_t frames);

}  // namespace tts::data
