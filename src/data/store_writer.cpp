#include "tts/data/store_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <numeric>

#include "tts/audio/audio_processor.h"
#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/core/hash.h"
#include "tts/core/json_writer.h"
#include "tts/core/logging.h"
#include "tts/formats/npy.h"
#include "tts/text/phonemizer.h"

namespace tts::data {
namespace fs = std::filesystem;
namespace {

constexpr const char* kTables[] = {"features.yaml", "metadata.tsv", "train.tsv",
                                   "val.tsv",       "errors.tsv",   "speakers.tsv"};

std::string tsv_field(const std::string& text) {
  std::string out = text;
  for (char& c : out) {
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  }
  return out;
}

void write_tensor(const std::string& path, const torch::Tensor& tensor) {
  torch::Tensor contiguous = tensor.to(torch::kFloat32).contiguous();
  formats::write_npy(path, contiguous.data_ptr<float>(),
                     std::vector<int64_t>(contiguous.sizes().begin(), contiguous.sizes().end()));
}

}  // namespace

namespace {

// The first `count` of `indices` in the order of their ids' seeded hashes.
std::vector<size_t> chosen_by_hash(const std::vector<StoreRow>& rows, std::vector<size_t> indices,
                                   int64_t count, int64_t seed) {
  std::vector<uint64_t> keys(indices.size());
  std::vector<size_t> order(indices.size());
  std::iota(order.begin(), order.end(), 0);
  for (size_t i = 0; i < indices.size(); ++i) keys[i] = hash_id(rows[indices[i]].id, seed);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return keys[a] != keys[b] ? keys[a] < keys[b] : rows[indices[a]].id < rows[indices[b]].id;
  });
  std::vector<size_t> chosen;
  for (int64_t k = 0; k < count; ++k) chosen.push_back(indices[order[static_cast<size_t>(k)]]);
  return chosen;
}

// Validation rows per speaker (`sizes` of each) summing to about `total`: shares in proportion
// to the sizes, the rest by largest remainder among the speakers that can give one more (a
// speaker keeps at least one row for training), so that the shares meet `total` whenever the
// speakers can; then at least one from, and at least one kept by, every speaker with two rows or
// more.
std::vector<int64_t> speaker_shares(const std::vector<int64_t>& sizes, int64_t total) {
  int64_t n = 0;
  for (int64_t size : sizes) n += size;
  std::vector<int64_t> shares(sizes.size());
  std::vector<std::pair<double, size_t>> remainders;
  int64_t given = 0;
  for (size_t s = 0; s < sizes.size(); ++s) {
    const double exact = static_cast<double>(total) * static_cast<double>(sizes[s]) / n;
    shares[s] = static_cast<int64_t>(std::floor(exact));
    given += shares[s];
    remainders.push_back({-(exact - std::floor(exact)), s});
  }
  std::sort(remainders.begin(), remainders.end());
  // A speaker of one row has none to give; one whose share already leaves it a single row neither.
  const auto can_give = [&](size_t s) { return shares[s] < sizes[s] - 1; };
  for (bool gave = true; given < total && gave;) {
    gave = false;
    for (size_t k = 0; given < total && k < remainders.size(); ++k) {
      const size_t s = remainders[k].second;
      if (!can_give(s)) continue;
      ++shares[s];
      ++given;
      gave = true;
    }
  }
  for (size_t s = 0; s < sizes.size(); ++s) {
    if (total > 0 && sizes[s] >= 2) shares[s] = std::max<int64_t>(shares[s], 1);
    shares[s] = std::min<int64_t>(shares[s], std::max<int64_t>(sizes[s] - 1, 0));
  }
  return shares;
}

}  // namespace

Split split_train_val(const std::vector<StoreRow>& rows, double val_size, int64_t seed) {
  auto n = static_cast<int64_t>(rows.size());
  int64_t wanted = val_size < 1 ? std::llround(val_size * static_cast<double>(n))
                                : static_cast<int64_t>(val_size);
  int64_t count = std::clamp<int64_t>(wanted, 0, std::max<int64_t>(n - 1, 0));
  if (count < wanted) {
    log::get("data")->warn(
        "data.val_size asks for {} validation utterances but only {} were kept; using {} so that "
        "training keeps at least one",
        wanted, n, count);
  }
  std::map<std::string, std::vector<size_t>> by_speaker;
  for (size_t i = 0; i < rows.size(); ++i) by_speaker[rows[i].speaker].push_back(i);
  std::vector<bool> in_val(rows.size(), false);
  if (by_speaker.size() <= 1) {
    std::vector<size_t> all(rows.size());
    std::iota(all.begin(), all.end(), 0);
    for (size_t i : chosen_by_hash(rows, all, count, seed)) in_val[i] = true;
  } else {
    std::vector<int64_t> sizes;
    for (const auto& [speaker, indices] : by_speaker) {
      sizes.push_back(static_cast<int64_t>(indices.size()));
    }
    const std::vector<int64_t> shares = speaker_shares(sizes, count);
    size_t s = 0;
    for (const auto& [speaker, indices] : by_speaker) {
      for (size_t i : chosen_by_hash(rows, indices, shares[s++], seed)) in_val[i] = true;
    }
  }
  Split split;
  for (size_t i = 0; i < rows.size(); ++i) (in_val[i] ? split.val : split.train).push_back(rows[i]);
  return split;
}

std::string format_store_tsv(const std::vector<StoreRow>& rows) {
  std::string out = "id\tn_frames\tn_samples\tmel\tlinear\twaveform\tspeaker\ttext\n";
  for (const auto& row : rows) {
    out +=
        fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n", row.id, row.n_frames, row.n_samples,
                    row.mel, row.linear, row.waveform, tsv_field(row.speaker), tsv_field(row.text));
  }
  return out;
}

std::string format_speakers_tsv(const std::vector<StoreSpeaker>& speakers) {
  std::string out = "name\tid\tutterances\tminutes\n";
  for (const auto& speaker : speakers) {
    out += fmt::format("{}\t{}\t{}\t{:.3f}\n", tsv_field(speaker.name), speaker.id,
                       speaker.utterances, speaker.minutes);
  }
  return out;
}

std::string format_errors_tsv(const std::vector<StoreError>& errors) {
  std::string out = "line\tid\treason\n";
  for (const auto& error : errors) {
    out += fmt::format("{}\t{}\t{}\n", error.line, tsv_field(error.id), tsv_field(error.reason));
  }
  return out;
}

std::string format_features_yaml(const config::Config& config, const StoreCounts& counts,
                                 const std::optional<StoreSource>& source) {
  // The phonemizer's version: other versions read some words otherwise.
  const std::string phonemizer = config.text.frontend == config::Frontend::kPhonemes
                                     ? fmt::format("phonemizer: {}\n", text::Phonemizer::version())
                                     : "";
  const std::string corpus =
      source ? fmt::format("corpus: {{layout: {}, folder: {}}}\n", source->layout,
                           json_string(source->folder))  // a JSON string is a YAML string
             : "";
  return fmt::format(
      "tts_train_version: {}\n{}{}{}counts: {{kept: {}, skipped: {}, frames: {}, hours: "
      "{:.6f}}}\nresampled_files: {}\n",
      TTS_VERSION, phonemizer, corpus, config::dump_sections(config, {"audio", "text"}),
      counts.kept, counts.skipped, counts.frames, counts.hours, counts.resampled_files);
}

StoreWriter::StoreWriter(std::string dir, bool with_linear, bool with_waveforms)
    : dir_(std::move(dir)), with_linear_(with_linear), with_waveforms_(with_waveforms) {
  create_folder((fs::path(dir_) / "mels").string());
  if (with_linear_) create_folder((fs::path(dir_) / "linear").string());
  if (with_waveforms_) create_folder((fs::path(dir_) / "waveforms").string());
}

StoreRow StoreWriter::write_utterance(const std::string& id, const audio::Features& features,
                                      const std::string& text) const {
  TTS_CHECK(features.mel.dim() == 2, "{}: mel has {} dimensions, expected [frames, n_mels]", id,
            features.mel.dim());
  // The speaker is the caller's to name (the writer sees no corpus).
  StoreRow row{id, features.mel.size(0), features.n_samples, mel_path(id), "-", "-", text, ""};
  if (with_waveforms_) {
    TTS_CHECK(features.waveform.defined() && features.waveform.numel() == features.n_samples,
              "{}: the store keeps waveforms (audio.waveforms: true) but none of {} samples was "
              "kept",
              id, features.n_samples);
    row.waveform = waveform_path(id);
    formats::write_npy((fs::path(dir_) / row.waveform).string(),
                       features.waveform.data_ptr<float>(), {features.n_samples});
  }
  if (with_linear_) {
    TTS_CHECK(features.linear.defined() && features.linear.size(0) == row.n_frames,
              "{}: the store has linear spectrograms (audio.linear: true) but none with {} frames "
              "was computed",
              id, row.n_frames);
    row.linear = linear_path(id);
    write_tensor((fs::path(dir_) / row.linear).string(), features.linear);
  }
  // The mel is written last: its presence marks a finished utterance.
  write_tensor((fs::path(dir_) / row.mel).string(), features.mel);
  return row;
}

void StoreWriter::write_metadata(const std::vector<StoreRow>& rows, const Split& split,
                                 const std::vector<StoreSpeaker>& speakers) const {
  write_file_atomic((fs::path(dir_) / "speakers.tsv").string(), format_speakers_tsv(speakers));
  write_file_atomic((fs::path(dir_) / "train.tsv").string(), format_store_tsv(split.train));
  write_file_atomic((fs::path(dir_) / "val.tsv").string(), format_store_tsv(split.val));
  write_file_atomic((fs::path(dir_) / "metadata.tsv").string(), format_store_tsv(rows));
}

void StoreWriter::write_errors(const std::vector<StoreError>& errors) const {
  write_file_atomic((fs::path(dir_) / "errors.tsv").string(), format_errors_tsv(errors));
}

void StoreWriter::write_features_yaml(const config::Config& config, const StoreCounts& counts,
                                      const std::optional<StoreSource>& source) const {
  write_file_atomic((fs::path(dir_) / "features.yaml").string(),
                    format_features_yaml(config, counts, source));
}

void StoreWriter::remove_tables() const {
  for (const char* name : kTables) {
    std::error_code error;
    fs::remove(fs::path(dir_) / name, error);
  }
}

void StoreWriter::remove_temporaries() const {
  int64_t removed = 0;
  for (const char* sub : {"", "mels", "linear", "waveforms"}) {
    fs::path folder = fs::path(dir_) / sub;
    std::error_code error;
    if (!fs::is_directory(folder, error)) continue;
    for (const auto& entry : fs::directory_iterator(folder, error)) {
      if (entry.path().filename().string().find(".tmp.") != std::string::npos &&
          entry.is_regular_file(error)) {
        removed += fs::remove(entry.path(), error) ? 1 : 0;
      }
    }
  }
  if (removed > 0) {
    log::get("data")->info("removed {} temporary files left by an interrupted run", removed);
  }
}

}  // namespace tts::data
