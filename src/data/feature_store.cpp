#include "tts/data/feature_store.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>
#include <string_view>
#include <type_traits>

#include "tts/audio/mel_settings.h"
#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/core/logging.h"
#include "tts/core/printable.h"
#include "tts/data/corpus.h"
#include "tts/formats/npy.h"
#include "tts/text/phonemizer.h"

namespace tts::data {
namespace {

const char* const kHeader = "id\tn_frames\tn_samples\tmel\tlinear\twaveform\tspeaker\ttext";
// Stores written before speakers were kept, and before waveforms were.
const char* const kHeaderWithoutSpeakers = "id\tn_frames\tn_samples\tmel\tlinear\twaveform\ttext";
const char* const kHeaderWithoutWaveforms = "id\tn_frames\tn_samples\tmel\tlinear\ttext";

// The store's settings against the config: audio.* through the one comparison of mel settings,
// then what only a store has (linear targets, waveforms, text).
class MismatchCollector {
 public:
  explicit MismatchCollector(const std::string& store_dir) : store_dir_(store_dir) {}
  void add(std::string line) { lines_.push_back(std::move(line)); }
  template <class T>
  void compare(const char* key, const T& stored, const T& wanted) {
    if (stored == wanted) return;
    lines_.push_back(fmt::format(
        "features in {} were made with {}={} but the config says {}={}: re-run tts-train "
        "preprocess with this config, or set {}: {}",
        store_dir_, key, text(stored), key, text(wanted), key, text(stored)));
  }
  std::vector<std::string> take() { return std::move(lines_); }

 private:
  template <class T>
  static std::string text(const T& value) {
    if constexpr (std::is_same_v<T, bool>) {
      return audio::config_text(value);
    } else if constexpr (config::is_choice_list_v<T>) {
      return fmt::format("[{}]", fmt::join(value, ", "));
    } else {
      return fmt::format("{}", value);
    }
  }
  std::string store_dir_;
  std::vector<std::string> lines_;
};

bool file_exists(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0;
}

// A store names its files relative to itself (mels/ID.npy): a store from elsewhere must not make
// the loader read files outside it through an absolute path, a '..' component or a folder that is
// a symlink (the file itself is opened without following one: fs.h).
void check_inside_store(const std::string& dir, const std::string& file,
                        const std::string& list_path, int line_number, const std::string& id) {
  bool outside = file.front() == '/' || file.find('\\') != std::string::npos;
  std::string linked;
  for (size_t start = 0; !outside && linked.empty() && start <= file.size();) {
    size_t end = std::min(file.find('/', start), file.size());
    outside = file.compare(start, end - start, "..") == 0;
    struct stat info {};
    const std::string folder = dir + "/" + file.substr(0, end);
    if (end < file.size() && ::lstat(folder.c_str(), &info) == 0 && S_ISLNK(info.st_mode)) {
      linked = folder;
    }
    start = end + 1;
  }
  TTS_CHECK(!outside,
            "{} line {} (utterance {}): the path '{}' leaves the feature store; expected a path "
            "inside it such as mels/{}.npy (no leading '/', no '..'); re-run tts-train preprocess "
            "to write the store",
            list_path, line_number, id, file, id);
  TTS_CHECK(linked.empty(),
            "{} line {} (utterance {}): the folder '{}' is a symbolic link, which may lead out of "
            "the feature store; expected a folder of the store: replace the link with the folder",
            list_path, line_number, id, linked);
}

int64_t file_size(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return -1;
  return static_cast<int64_t>(info.st_size);
}

std::vector<std::string> split_tabs(const std::string& line, size_t max_fields) {
  std::vector<std::string> fields;
  size_t start = 0;
  while (fields.size() + 1 < max_fields) {
    size_t tab = line.find('\t', start);
    if (tab == std::string::npos) break;
    fields.push_back(line.substr(start, tab - start));
    start = tab + 1;
  }
  fields.push_back(line.substr(start));
  return fields;
}

// Drops utterances longer than `max_frames`, logging how many (never silently).
void drop_long(std::vector<Utterance>& list, int max_frames, const char* which) {
  if (max_frames <= 0) return;
  size_t before = list.size();
  int64_t longest = 0;
  for (const auto& u : list) {
    if (u.n_frames > max_frames) longest = std::max(longest, u.n_frames);
  }
  list.erase(std::remove_if(list.begin(), list.end(),
                            [&](const Utterance& u) { return u.n_frames > max_frames; }),
             list.end());
  if (list.size() != before) {
    log::get("data")->info(
        "data.max_frames={} drops {} of {} {} utterances (the longest has {} frames)", max_frames,
        before - list.size(), before, which, longest);
  }
}

}  // namespace

std::string mel_settings_path(const std::string& mel_path) {
  return std::filesystem::path(mel_path).replace_extension(".yaml").string();
}

namespace {

// The first line of a mel's settings file: what tells it from any other STEM.yaml.
constexpr std::string_view kMelSettingsMark =
    "# the settings the mel beside this file was made with (tts-train)\n";

}  // namespace

void write_mel_settings(const std::string& mel_path, const config::Config& config) {
  write_file_atomic(mel_settings_path(mel_path),
                    std::string(kMelSettingsMark) + config::dump_sections(config, {"audio"}));
}

bool is_mel_settings_file(const std::string& path) {
  try {
    const FileDescriptor fd = open_regular_file_for_read(path);
    return read_at(fd, path, 0, static_cast<int64_t>(kMelSettingsMark.size())) == kMelSettingsMark;
  } catch (const Error&) {
    return false;
  }
}

StoreSettings read_store_settings(const std::string& dir) {
  std::string path = dir + "/features.yaml";
  TTS_CHECK(file_exists(path),
            "{}: not found; is {} a feature store? Make one with `tts-train preprocess --config "
            "CFG --input CORPUS --output {}`",
            path, dir, dir);
  const std::string text = read_file(path);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw Error(fmt::format("{}: not valid YAML: {}", path, e.what()));
  }
  TTS_CHECK(root.IsMap() && root["audio"].IsMap() && root["text"].IsMap(),
            "{}: expected the mappings `audio:` and `text:` (written by tts-train preprocess); "
            "re-run preprocess",
            path);
  StoreSettings settings;
  if (const YAML::Node version = root["tts_train_version"]) {
    TTS_CHECK(version.IsScalar() && version.Scalar().size() <= 64,
              "{} line {}: tts_train_version: expected a version string (written by tts-train "
              "preprocess); re-run preprocess",
              path, version.Mark().line + 1);
    settings.version = version.Scalar();
  }
  if (const YAML::Node phonemizer = root["phonemizer"]) {
    TTS_CHECK(phonemizer.IsScalar() && phonemizer.Scalar().size() <= 64,
              "{} line {}: phonemizer: expected the phonemizer's name and version (written by "
              "tts-train preprocess); re-run preprocess",
              path, phonemizer.Mark().line + 1);
    settings.phonemizer = phonemizer.Scalar();
  }
  if (const YAML::Node corpus = root["corpus"]) {
    const YAML::Node layout = corpus.IsMap() ? corpus["layout"] : YAML::Node();
    const YAML::Node folder = corpus.IsMap() ? corpus["folder"] : YAML::Node();
    const std::optional<config::CorpusLayout> parsed =
        layout && layout.IsScalar() ? config::parse_choice<config::CorpusLayout>(layout.Scalar())
                                    : std::nullopt;
    TTS_CHECK(parsed && folder && folder.IsScalar() && !folder.Scalar().empty() &&
                  folder.Scalar().size() <= 4096,
              "{} line {}: corpus: expected {{layout: {}, folder: PATH}} (written by tts-train "
              "preprocess); re-run preprocess",
              path, corpus.Mark().line + 1,
              fmt::join(config::choice_names<config::CorpusLayout>(), "|"));
    settings.source = StoreSource{*parsed, folder.Scalar()};
  }
  // The sections are read from the text itself, never re-emitted: yaml-cpp's emitter recurses
  // once per level, and aliases can nest a small file thousands of levels deep.
  try {
    settings.config = config::parse_config_sections(text, path, {"audio", "text"});
  } catch (const UsageError& e) {
    throw Error(fmt::format(
        "{}: its audio/text settings do not load ({}); it was written by tts-train {}, this is "
        "{}: re-run tts-train preprocess",
        path, e.what(), settings.version.empty() ? "(unknown version)" : settings.version,
        TTS_VERSION));
  }
  return settings;
}

std::vector<std::string> settings_mismatches(const config::Config& store,
                                             const config::Config& config,
                                             const std::string& store_dir,
                                             const std::optional<StoreSource>& source) {
  const auto& s = store.audio;
  const auto& c = config.audio;
  MismatchCollector m(store_dir);
  audio::MismatchWording wording{
      fmt::format("features in {} were made with", store_dir), "the config says",
      [](const std::string& key, const std::string& made, const std::string&) {
        return fmt::format("re-run tts-train preprocess with this config, or set {}: {}", key,
                           made);
      }};
  for (std::string& line : audio::mel_settings_mismatches(s, c, wording)) m.add(std::move(line));
  // A store with linear targets serves a config without them; the reverse cannot work.
  if (c.linear && !s.linear) m.compare("audio.linear", s.linear, c.linear);
  if (config.model.predict_linear && !s.linear) {
    m.add(fmt::format(
        "features in {} have no linear targets (audio.linear=false) but the config says "
        "model.predict_linear=true: re-run tts-train preprocess with audio.linear: true, or set "
        "model.predict_linear: false",
        store_dir));
  }
  const config::StoreNeeds needs = config::store_needs(config.model.kind);
  if (needs.waveforms && !s.waveforms) {
    // The corpus as the store recorded it, so that the commands run as they are.
    const std::string corpus =
        source ? fmt::format("{} --corpus {}", source->folder, source->layout) : "CORPUS";
    m.add(fmt::format(
        "features in {} keep no waveforms (audio.waveforms=false) but model.kind={} trains on "
        "them: re-run tts-train preprocess --config CFG --input {} --output VFEATS --set "
        "audio.waveforms=true, or make a store of an acoustic model's mels with tts-train gta "
        "--checkpoint RUN --data {} --out GTA --wavs {} (docs/vocoders.md)",
        store_dir, config.model.kind, corpus, store_dir, corpus));
  }
  if (!needs.text) return m.take();
  m.compare("text.frontend", store.text.frontend, config.text.frontend);
  if (config.text.frontend == config::Frontend::kPhonemes) {
    m.compare("text.language", store.text.language, config.text.language);
  }
  m.compare("text.symbol_set", store.text.symbol_set, config.text.symbol_set);
  m.compare("text.cleaners", store.text.cleaners, config.text.cleaners);
  return m.take();
}

std::vector<Utterance> read_utterance_list(const std::string& dir, const std::string& file_name) {
  std::string path = dir + "/" + file_name;
  std::istringstream in(read_file(path));
  std::string line;
  std::getline(in, line);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  const bool with_speaker_column = line == kHeader;
  const bool with_waveform_column = with_speaker_column || line == kHeaderWithoutSpeakers;
  TTS_CHECK(with_waveform_column || line == kHeaderWithoutWaveforms,
            "{} line 1: expected the header '{}', found '{}'", path,
            fmt::format("{}", fmt::join(split_tabs(kHeader, 8), " ")), printable(line));
  const size_t columns = with_speaker_column ? 8 : with_waveform_column ? 7 : 6;
  std::vector<Utterance> list;
  int line_number = 1;
  while (std::getline(in, line)) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<std::string> fields = split_tabs(line, columns);
    TTS_CHECK(fields.size() == columns,
              "{} line {}: expected {} tab-separated fields, found {}: '{}'", path, line_number,
              columns, fields.size(), line);
    Utterance u;
    u.id = fields[0];
    // Ids name files that commands write (gta's OUT/ID.npy): one that is a path would escape.
    TTS_CHECK(!u.id.empty() && u.id != "." && u.id != ".." &&
                  u.id.find_first_of("/\\") == std::string::npos,
              "{} line {}: the id '{}' cannot name a file (empty, '.', '..' or with '/' or '\\'); "
              "re-run tts-train preprocess to write the store",
              path, line_number, u.id);
    auto count = [&](size_t field, const char* name) {
      int64_t value = 0;
      try {
        size_t used = 0;
        value = std::stoll(fields[field], &used);
        if (used != fields[field].size()) throw std::invalid_argument("trailing characters");
      } catch (const std::exception&) {
        throw Error(fmt::format("{} line {} (utterance {}): {} '{}' is not an integer", path,
                                line_number, u.id, name, fields[field]));
      }
      TTS_CHECK(value > 0, "{} line {} (utterance {}): {} must be > 0, found {}", path, line_number,
                u.id, name, value);
      return value;
    };
    u.n_frames = count(1, "n_frames");
    u.n_samples = count(2, "n_samples");
    TTS_CHECK(fields[3] != "-" && !fields[3].empty(),
              "{} line {} (utterance {}): no mel file; every utterance needs one", path,
              line_number, u.id);
    check_inside_store(dir, fields[3], path, line_number, u.id);
    u.mel_path = dir + "/" + fields[3];
    if (fields[4] != "-" && !fields[4].empty()) {
      check_inside_store(dir, fields[4], path, line_number, u.id);
      u.linear_path = dir + "/" + fields[4];
    }
    if (with_waveform_column && fields[5] != "-" && !fields[5].empty()) {
      check_inside_store(dir, fields[5], path, line_number, u.id);
      u.waveform_path = dir + "/" + fields[5];
    }
    if (with_speaker_column) {
      u.speaker = fields[6];
      const std::string problem = speaker_name_problem(u.speaker);
      TTS_CHECK(problem.empty(), "{} line {} (utterance {}): {}; re-run tts-train preprocess", path,
                line_number, u.id, problem);
    }
    u.text = fields[columns - 1];
    list.push_back(std::move(u));
  }
  return list;
}

std::string feature_file_error(const std::string& path, const std::string& id,
                               const std::exception& error) {
  std::string reason = error.what();
  if (reason.rfind(path + ": ", 0) == 0) reason.erase(0, path.size() + 2);
  return fmt::format("{} (utterance {}): {}", path, id, reason);
}

std::optional<std::string> check_feature_file(const std::string& path, const std::string& id,
                                              int64_t bins, int64_t frames) {
  formats::NpyHeader header;
  try {
    header = formats::read_npy_header(path);
  } catch (const Error& e) {
    return feature_file_error(path, id, e);
  }
  if (header.dtype != "<f4") {
    return fmt::format("{} (utterance {}): dtype '{}', expected float32 ('<f4')", path, id,
                       header.dtype);
  }
  if (header.fortran_order) {
    return fmt::format("{} (utterance {}): Fortran order, expected C order", path, id);
  }
  if (header.shape.size() != 2) {
    return fmt::format("{} (utterance {}): {}-D array of shape [{}], expected 2-D [frames, bins]",
                       path, id, header.shape.size(), fmt::join(header.shape, ", "));
  }
  if (header.shape[1] != bins) {
    return fmt::format("{} (utterance {}): {} bins, expected {} (shape [{}, {}])", path, id,
                       header.shape[1], bins, header.shape[0], header.shape[1]);
  }
  if (header.shape[0] != frames) {
    return fmt::format("{} (utterance {}): {} frames, metadata says {}", path, id, header.shape[0],
                       frames);
  }
  int64_t expected_size = static_cast<int64_t>(header.data_offset) + frames * bins * 4;
  int64_t size = file_size(path);
  if (size != expected_size) {
    return fmt::format("{} (utterance {}): {} bytes, expected {} for [{}, {}] float32 (truncated?)",
                       path, id, size, expected_size, frames, bins);
  }
  return std::nullopt;
}

FeatureStore FeatureStore::open(const std::string& dir, const config::Config& config) {
  FeatureStore store;
  store.dir_ = dir;
  while (store.dir_.size() > 1 && store.dir_.back() == '/') store.dir_.pop_back();
  StoreSettings settings = read_store_settings(store.dir_);
  store.version_ = settings.version;
  store.store_config_ = settings.config;
  std::vector<std::string> mismatches =
      settings_mismatches(store.store_config_, config, store.dir_, settings.source);
  if (!mismatches.empty()) {
    throw UsageError(fmt::format("{}/features.yaml does not match the config ({} setting{}):\n  {}",
                                 store.dir_, mismatches.size(), mismatches.size() == 1 ? "" : "s",
                                 fmt::join(mismatches, "\n  ")));
  }
  // Phonemes made by another espeak-ng would not be the ones synthesize makes from text.
  if (config::store_needs(config.model.kind).text &&
      config.text.frontend == config::Frontend::kPhonemes) {
    const std::string running = text::Phonemizer::version();
    TTS_USAGE_CHECK(settings.phonemizer == running,
                    "{}/features.yaml: its phonemes were made by {}, this tts-train reads text "
                    "with {}: re-run tts-train preprocess so that training and synthesis read "
                    "text alike",
                    store.dir_,
                    settings.phonemizer.empty() ? "(no phonemizer recorded)" : settings.phonemizer,
                    running);
  }
  store.train_ = read_utterance_list(store.dir_, "train.tsv");
  store.val_ = read_utterance_list(store.dir_, "val.tsv");
  TTS_CHECK(!store.train_.empty(), "{}/train.tsv: no utterances; re-run tts-train preprocess",
            store.dir_);
  bool need_linear = config.audio.linear || config.model.predict_linear;
  bool need_waveforms = config::store_needs(config.model.kind).waveforms;
  for (const auto* list : {&store.train_, &store.val_}) {
    for (const auto& u : *list) {
      TTS_CHECK(!need_linear || !u.linear_path.empty(),
                "{}: utterance {} has no linear file but the config needs linear targets; re-run "
                "tts-train preprocess with audio.linear: true",
                store.dir_, u.id);
      TTS_CHECK(!need_waveforms || !u.waveform_path.empty(),
                "{}: utterance {} has no waveform file but model.kind={} trains on waveforms; "
                "re-run tts-train preprocess with audio.waveforms: true",
                store.dir_, u.id, config.model.kind);
    }
  }
  store.speakers_ = count_speakers(store.store_config_.audio.sample_rate, store.train_, store.val_);
  drop_long(store.train_, config.data.max_frames, "training");
  drop_long(store.val_, config.data.max_frames, "validation");
  TTS_CHECK(!store.train_.empty(),
            "{}: data.max_frames={} drops every training utterance; raise it or set it to 0",
            store.dir_, config.data.max_frames);
  log::get("data")->info("{}: {} training and {} validation utterances", store.dir_,
                         store.train_.size(), store.val_.size());
  return store;
}

}  // namespace tts::data
