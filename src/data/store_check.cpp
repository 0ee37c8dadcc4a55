#include "tts/data/store_check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/core/logging.h"
#include "tts/core/timer.h"
#include "tts/data/feature_store.h"
#include "tts/formats/npy.h"

namespace tts::data {
namespace {

// A feature file that passed check_feature_file (so it is [frames, bins] float32 of the right
// size), scanned for NaN and Inf: training on one poisons every weight. Counts both and names the
// first one's frame and bin.
std::optional<std::string> non_finite_values(const std::string& path, const std::string& id,
                                             int64_t bins) {
  formats::NpyArray array;
  try {
    array = formats::read_npy(path);
  } catch (const Error& e) {
    return feature_file_error(path, id, e);
  }
  int64_t nan = 0;
  int64_t inf = 0;
  int64_t first = -1;
  for (size_t i = 0; i < array.data.size(); ++i) {
    const float v = array.data[i];
    if (std::isfinite(v)) continue;
    if (first < 0) first = static_cast<int64_t>(i);
    ++(std::isnan(v) ? nan : inf);
  }
  if (first < 0) return std::nullopt;
  const std::string where = bins > 0 ? fmt::format("frame {}, bin {}", first / bins, first % bins)
                                     : fmt::format("sample {}", first);
  return fmt::format(
      "{} (utterance {}): {} non-finite value{} ({} NaN, {} Inf), the first at {} ({}); re-run "
      "tts-train preprocess",
      path, id, nan + inf, nan + inf == 1 ? "" : "s", nan, inf, where,
      array.data[static_cast<size_t>(first)]);
}

// A waveform (waveforms/ID.npy, what a vocoder trains on): float32 [n_samples] as the tables
// say, as long as its mel within a frame (n_frames × hop, give or take one window of n_fft
// samples: the STFT's centering or padding), then finite.
std::optional<std::string> waveform_problem(const Utterance& u, const config::AudioOptions& audio) {
  const std::string& path = u.waveform_path;
  formats::NpyHeader header;
  try {
    header = formats::read_npy_header(path);
  } catch (const Error& e) {
    return feature_file_error(path, u.id, e);
  }
  if (header.dtype != "<f4" || header.fortran_order) {
    return fmt::format("{} (utterance {}): dtype '{}'{}, expected float32 ('<f4') in C order", path,
                       u.id, header.dtype, header.fortran_order ? " in Fortran order" : "");
  }
  if (header.shape.size() != 1) {
    return fmt::format(
        "{} (utterance {}): {}-D array of shape [{}], expected a 1-D waveform [{}]; re-run "
        "tts-train preprocess",
        path, u.id, header.shape.size(), fmt::join(header.shape, ", "), u.n_samples);
  }
  if (header.shape[0] != u.n_samples) {
    return fmt::format("{} (utterance {}): {} samples, metadata says {}", path, u.id,
                       header.shape[0], u.n_samples);
  }
  const int64_t expected = u.n_frames * audio.hop_length;
  const int64_t tolerance = std::max<int64_t>(audio.n_fft, audio.hop_length);
  if (std::abs(u.n_samples - expected) > tolerance) {
    return fmt::format(
        "{} (utterance {}): {} samples for a mel of {} frames, which stands for {} samples "
        "({} frames × hop {}, give or take {}): the waveform does not belong to its mel; re-run "
        "tts-train preprocess",
        path, u.id, u.n_samples, u.n_frames, expected, u.n_frames, audio.hop_length, tolerance);
  }
  return non_finite_values(path, u.id, 0);  // read_npy checks the data against the file's size
}

// check_feature_file, then (when the file is sound) the scan for NaN/Inf.
std::optional<std::string> feature_file_problem(const std::string& path, const std::string& id,
                                                int64_t bins, int64_t frames) {
  if (auto problem = check_feature_file(path, id, bins, frames)) return problem;
  return non_finite_values(path, id, bins);
}

// Per-speaker counts of metadata.tsv and the split; a row of train.tsv or val.tsv whose speaker
// is not metadata.tsv's, and a speakers.tsv that disagrees with metadata.tsv, are problems.
std::vector<SpeakerCounts> speaker_counts(const std::string& dir,
                                          std::map<std::string, std::vector<Utterance>>& lists,
                                          int sample_rate, std::vector<std::string>& problems) {
  std::map<std::string, SpeakerCounts> by_name;
  for (const StoreSpeaker& speaker : count_speakers(sample_rate, lists["metadata.tsv"])) {
    SpeakerCounts& counts = by_name[speaker.name];
    counts.name = speaker.name;
    counts.utterances = speaker.utterances;
    counts.minutes = speaker.minutes;
  }
  std::map<std::string, std::string> speaker_of;
  for (const auto& u : lists["metadata.tsv"]) speaker_of[u.id] = u.speaker;
  for (const char* name : {"train.tsv", "val.tsv"}) {
    for (const auto& u : lists[name]) {
      auto found = speaker_of.find(u.id);
      if (found == speaker_of.end()) continue;  // reported as not in metadata.tsv
      if (found->second != u.speaker) {
        problems.push_back(
            fmt::format("{}/{}: utterance {} is spoken by '{}' there and by '{}' in "
                        "metadata.tsv; re-run tts-train preprocess",
                        dir, name, u.id, u.speaker, found->second));
        continue;
      }
      ++(std::string(name) == "train.tsv" ? by_name[u.speaker].train : by_name[u.speaker].val);
    }
  }
  const std::string table = dir + "/speakers.tsv";
  std::error_code error;
  if (std::filesystem::exists(table, error)) {
    try {
      std::istringstream in(read_file(table));
      std::string line;
      std::getline(in, line);
      std::map<std::string, int64_t> listed;
      while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string speaker;
        int64_t id = 0;
        int64_t utterances = 0;
        if (fields >> speaker >> id >> utterances) listed[speaker] = utterances;
      }
      std::map<std::string, int64_t> counted;
      for (const auto& [name, counts] : by_name) counted[name] = counts.utterances;
      if (listed != counted) {
        problems.push_back(fmt::format(
            "{}: its speakers and their counts differ from metadata.tsv's ({} against {} "
            "speakers); re-run tts-train preprocess",
            table, listed.size(), counted.size()));
      }
    } catch (const Error& e) {
      problems.push_back(e.what());
    }
  }
  std::vector<SpeakerCounts> speakers;
  for (auto& [name, counts] : by_name) speakers.push_back(counts);
  return speakers;
}

// Adds a problem per train.tsv/val.tsv row not in metadata.tsv and per val.tsv row in `in_train`.
void check_subsets(const std::string& dir, std::map<std::string, std::vector<Utterance>>& lists,
                   const std::set<std::string>& in_train, std::vector<std::string>& problems) {
  if (lists.count("metadata.tsv")) {
    std::set<std::string> listed;
    for (const auto& u : lists["metadata.tsv"]) listed.insert(u.id);
    for (const char* name : {"train.tsv", "val.tsv"}) {
      for (const auto& u : lists[name]) {
        if (!listed.count(u.id)) {
          problems.push_back(
              fmt::format("{}/{}: utterance {} is not in metadata.tsv", dir, name, u.id));
        }
        if (std::string(name) == "val.tsv" && in_train.count(u.id)) {
          problems.push_back(fmt::format(
              "{}/val.tsv: utterance {} is also in train.tsv; re-run tts-train preprocess", dir,
              u.id));
        }
      }
    }
  }
}

// The utterances that lack a file the config needs: a problem of the whole store, said once.
struct MissingFiles {
  std::vector<std::string> linear, waveform;
};

// Checks utterance `id`'s mel, linear and waveform files into `report`, counting the files; one
// without a linear or waveform file the config needs goes into `missing`.
void check_utterance_files(const std::string& id, const Utterance& u, const config::Config& config,
                           bool need_linear, StoreCheckReport& report, MissingFiles& missing) {
  if (auto problem = feature_file_problem(u.mel_path, id, config.audio.n_mels, u.n_frames)) {
    report.problems.push_back(*problem);
  }
  ++report.files;
  if (!u.linear_path.empty()) {
    if (auto problem =
            feature_file_problem(u.linear_path, id, config.audio.n_linear(), u.n_frames)) {
      report.problems.push_back(*problem);
    }
    ++report.files;
  } else if (need_linear) {
    missing.linear.push_back(id);
  }
  if (!u.waveform_path.empty()) {
    if (auto problem = waveform_problem(u, config.audio)) report.problems.push_back(*problem);
    ++report.files;
  } else if (config::store_needs(config.model.kind).waveforms) {
    missing.waveform.push_back(id);
  }
}

// "3 of 16 utterances (a, b, c)" or "all 16 utterances": which ones, the first few named.
std::string which_utterances(const std::vector<std::string>& ids, int64_t all) {
  if (static_cast<int64_t>(ids.size()) == all) return fmt::format("all {} utterances", all);
  const size_t shown = std::min<size_t>(ids.size(), 5);
  return fmt::format("{} of {} utterances ({}{})", ids.size(), all,
                     fmt::join(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(shown), ", "),
                     ids.size() > shown ? ", ..." : "");
}

// The store-wide problems `missing` holds, one line each.
void report_missing(const std::string& dir, const config::Config& config,
                    const MissingFiles& missing, StoreCheckReport& report) {
  if (!missing.linear.empty()) {
    report.problems.push_back(fmt::format(
        "{}/metadata.tsv: {} have no linear file but the config needs linear targets "
        "(audio.linear or model.predict_linear); re-run tts-train preprocess with audio.linear: "
        "true",
        dir, which_utterances(missing.linear, report.utterances)));
  }
  if (!missing.waveform.empty()) {
    report.problems.push_back(fmt::format(
        "{}/metadata.tsv: {} have no waveform file but model.kind {} trains on waveforms; re-run "
        "tts-train preprocess with audio.waveforms: true",
        dir, which_utterances(missing.waveform, report.utterances), config.model.kind));
  }
}

}  // namespace

StoreCheckReport check_store(const std::string& dir_argument, const config::Config& config) {
  std::string dir = dir_argument;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  StoreCheckReport report;
  auto& problems = report.problems;

  try {
    StoreSettings settings = read_store_settings(dir);
    for (auto& line : settings_mismatches(settings.config, config, dir, settings.source)) {
      problems.push_back(dir + "/features.yaml: " + line);
    }
  } catch (const Error& e) {
    problems.push_back(e.what());
  }

  // metadata.tsv lists every utterance; train.tsv and val.tsv are subsets of it.
  std::map<std::string, std::vector<Utterance>> lists;
  for (const char* name : {"metadata.tsv", "train.tsv", "val.tsv"}) {
    try {
      lists[name] = read_utterance_list(dir, name);
    } catch (const Error& e) {
      problems.push_back(e.what());
    }
  }
  std::map<std::string, const Utterance*> all;
  std::set<std::string> in_train;
  for (const auto& [name, list] : lists) {
    std::set<std::string> ids;
    for (const auto& u : list) {
      if (!ids.insert(u.id).second) {
        problems.push_back(fmt::format("{}/{}: utterance {} is listed twice", dir, name, u.id));
      }
      if (u.text.empty()) {
        problems.push_back(fmt::format("{}/{}: utterance {} has an empty text", dir, name, u.id));
      }
      all.emplace(u.id, &u);
      if (name == "train.tsv") in_train.insert(u.id);
    }
  }
  check_subsets(dir, lists, in_train, problems);

  report.speakers = speaker_counts(dir, lists, config.audio.sample_rate, problems);
  const bool need_linear = config.audio.linear || config.model.predict_linear;
  report.utterances = static_cast<int64_t>(all.size());
  Progress progress("utterances", report.utterances, log::get("data"));
  MissingFiles missing;
  for (const auto& [id, u] : all) {
    check_utterance_files(id, *u, config, need_linear, report, missing);
    if (config.data.max_frames > 0 && u->n_frames > config.data.max_frames) ++report.too_long;
    progress.advance();
  }
  progress.finish();
  report_missing(dir, config, missing, report);
  return report;
}

}  // namespace tts::data
