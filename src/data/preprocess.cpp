#include "tts/data/preprocess.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <filesystem>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <unordered_map>
#include <vector>

#include "tts/audio/audio_io.h"
#include "tts/audio/audio_processor.h"
#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/core/logging.h"
#include "tts/core/timer.h"
#include "tts/data/corpus.h"
#include "tts/data/store_writer.h"
#include "tts/data/text_bounds.h"
#include "tts/text/text_processor.h"

namespace tts::data {
namespace fs = std::filesystem;
namespace {

constexpr char kStateDir[] = ".preprocess";
constexpr char kSettingsFile[] = "audio.yaml";
constexpr char kJournalFile[] = "done.tsv";

// Identifies a WAV file's content cheaply: a changed file has a new size or modification time.
struct WavStamp {
  int64_t size = 0;
  int64_t mtime = 0;
  bool operator==(const WavStamp& other) const {
    return size == other.size && mtime == other.mtime;
  }
};

std::optional<WavStamp> stamp_of(const std::string& path) {
  std::error_code error;
  if (!fs::is_regular_file(path, error)) return std::nullopt;
  auto size = fs::file_size(path, error);
  if (error) return std::nullopt;
  auto mtime = fs::last_write_time(path, error);
  if (error) return std::nullopt;
  return WavStamp{static_cast<int64_t>(size),
                  static_cast<int64_t>(mtime.time_since_epoch().count())};
}

struct JournalRecord {
  int64_t n_frames = 0;
  int64_t n_samples = 0;
  int64_t original_rate = 0;
  WavStamp stamp;
};

// FEATS/.preprocess/done.tsv: one line per finished utterance, appended once its arrays are in
// place ("id n_frames n_samples original_rate wav_size wav_mtime"). A line cut short by a kill
// does not parse and is ignored.
class Journal {
 public:
  Journal(const std::string& path, bool keep_records)
      : path_(path), out_(open_for_append(path, !keep_records)) {
    if (keep_records) {
      std::istringstream in(read_file(path));
      std::string line;
      while (std::getline(in, line)) parse(line);
    }
  }

  const JournalRecord* find(const std::string& id) const {
    auto found = records_.find(id);
    return found == records_.end() ? nullptr : &found->second;
  }

  void append(const std::string& id, const JournalRecord& record) {
    std::lock_guard<std::mutex> lock(mutex_);
    write_all(out_,
              fmt::format("{}\t{}\t{}\t{}\t{}\t{}\n", id, record.n_frames, record.n_samples,
                          record.original_rate, record.stamp.size, record.stamp.mtime),
              path_);
  }

 private:
  void parse(const std::string& line) {
    std::istringstream fields(line);
    std::string id;
    JournalRecord record;
    std::string rest;
    if (fields >> id >> record.n_frames >> record.n_samples >> record.original_rate >>
            record.stamp.size >> record.stamp.mtime &&
        !(fields >> rest)) {
      records_[id] = record;
    }
  }

  std::string path_;
  std::unordered_map<std::string, JournalRecord> records_;
  std::mutex mutex_;
  FileDescriptor out_;
};

// "key: value" pairs of a dump_sections() text (comments dropped).
std::map<std::string, std::string> settings_values(const std::string& dump) {
  std::map<std::string, std::string> values;
  std::istringstream in(dump);
  std::string section;
  std::string line;
  while (std::getline(in, line)) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    if (line[0] != ' ') {
      section = line.substr(0, colon);
      continue;
    }
    std::string value = line.substr(colon + 1);
    value = value.substr(0, value.find(" #"));
    size_t begin = value.find_first_not_of(' ');
    size_t end = value.find_last_not_of(' ');
    value = begin == std::string::npos ? "" : value.substr(begin, end - begin + 1);
    values[section + "." + line.substr(line.find_first_not_of(' '), colon - 2)] = value;
  }
  return values;
}

std::string describe_changes(const std::string& before, const std::string& after) {
  auto old_values = settings_values(before);
  auto new_values = settings_values(after);
  std::vector<std::string> changes;
  for (const auto& [key, value] : new_values) {
    auto old = old_values.find(key);
    std::string old_value = old == old_values.end() ? "(unset)" : old->second;
    if (old_value != value) changes.push_back(fmt::format("{}: {} -> {}", key, old_value, value));
  }
  return changes.empty() ? "the tool's settings format"
                         : fmt::format("{}", fmt::join(changes, ", "));
}

// Compares the audio settings with those of an earlier run into the same store. Returns whether
// that run's features can be reused; when they cannot, removes them (saying why).
bool check_earlier_run(const std::string& output_dir, const config::Config& config) {
  fs::path state = fs::path(output_dir) / kStateDir;
  fs::path settings_path = state / kSettingsFile;
  std::string settings = config::dump_sections(config, {"audio"});
  std::error_code error;
  bool reusable = false;
  if (fs::is_regular_file(settings_path, error)) {
    std::string earlier = read_file(settings_path.string());
    reusable = earlier == settings;
    if (!reusable) {
      log::get("data")->info(
          "the audio settings differ from the earlier run into '{}' ({}); recomputing the features "
          "of every utterance",
          output_dir, describe_changes(earlier, settings));
      fs::remove_all(fs::path(output_dir) / "mels", error);
      fs::remove_all(fs::path(output_dir) / "linear", error);
    }
  }
  create_folder(state.string());
  if (!reusable) {
    fs::remove(state / kJournalFile, error);
    write_file_atomic(settings_path.string(), settings);
  }
  return reusable;
}

struct Outcome {
  bool kept = false;
  bool reused = false;
  StoreRow row;
  std::string reason;  // "category: details" when skipped
  int64_t original_rate = 0;
};

// Everything one utterance needs; shared by the worker threads (read-only but for the journal).
struct Job {
  const config::Config& config;
  const text::TextProcessor& text;
  const StoreWriter& writer;
  Journal& journal;
  bool reuse;
};

Outcome skip(std::string reason) {
  Outcome outcome;
  outcome.reason = std::move(reason);
  return outcome;
}

bool too_long(const config::Config& config, int64_t n_samples) {
  return static_cast<double>(n_samples) > config.data.max_seconds * config.audio.sample_rate;
}

std::string too_long_reason(const config::Config& config, int64_t n_samples) {
  return fmt::format("too long: {:.2f} s after trimming, more than data.max_seconds = {}",
                     static_cast<double>(n_samples) / config.audio.sample_rate,
                     config.data.max_seconds);
}

// Why `n_symbols` symbols are refused: per utterance while `n_samples` < 0, else per second.
std::optional<std::string> text_problem(const Job& job, size_t n_symbols, int64_t n_samples) {
  const double seconds =
      n_samples < 0 ? -1 : static_cast<double>(n_samples) / job.config.audio.sample_rate;
  return text_bound_problem(static_cast<int64_t>(n_symbols), seconds);
}

// Cleans `entry`'s text into `cleaned` and `ids`; returns why the utterance is skipped, if so.
std::optional<std::string> transcript_problem(const Job& job, const CorpusEntry& entry,
                                              std::string& cleaned, std::vector<int64_t>& ids) {
  // A transcript many times longer than any utterance is refused before the cleaners and the
  // phonemizer see it (cleaning may lengthen it: "1984" is read out; four bytes per symbol).
  constexpr size_t kMaxTranscriptBytes = size_t{4} * config::kMaxSymbolsPerUtterance;
  if (entry.text.size() > kMaxTranscriptBytes) {
    return fmt::format(
        "too much text: a transcript of {} bytes, more than {} (four for each of the {} symbols "
        "an utterance may have); split the utterance",
        entry.text.size(), kMaxTranscriptBytes, config::kMaxSymbolsPerUtterance);
  }
  try {
    cleaned = job.text.clean(entry.text);
    ids = job.text.to_ids(cleaned);
  } catch (const Error& e) {
    return fmt::format("bad transcript: {}", e.what());
  }
  if (auto problem = text_problem(job, ids.size(), -1)) return *problem;
  // NVIDIA's english_cleaners keeps a space where the text was only spaces: no letters is empty.
  const bool blank = cleaned.find_first_not_of(" \t") == std::string::npos;
  if (blank || ids.size() <= 1) {
    return fmt::format("empty transcript: nothing is left of \"{}\" after cleaning", entry.text);
  }
  return std::nullopt;
}

// Reads `wav` into `features` and `original_rate`; returns why the utterance is skipped, if so.
std::optional<std::string> compute_features(const audio::AudioProcessor& audio,
                                            const config::AudioOptions& options,
                                            const std::string& wav, audio::Features& features,
                                            int& original_rate) {
  try {
    std::vector<float> samples = audio::read_audio(wav, options, &original_rate);
    if (static_cast<int64_t>(samples.size()) < options.n_fft) {
      return fmt::format(
          "too short: '{}' has {} samples, fewer than one frame "
          "(audio.n_fft = {})",
          wav, samples.size(), options.n_fft);
    }
    features = audio.compute(samples, options.linear, options.waveforms);
  } catch (const audio::UnusableAudio& e) {
    return fmt::format("{}: '{}': {}", e.category(), wav, e.what());
  } catch (const std::bad_alloc&) {
    return fmt::format(
        "bad audio: '{}': computing its features needs more memory than this machine has; the "
        "file is damaged or far longer than speech clips",
        wav);
  } catch (const std::exception& e) {
    std::string message = e.what();
    if (message.find(wav) == std::string::npos) message = wav + ": " + message;
    return "bad audio: " + message;
  }
  return std::nullopt;
}

Outcome process(const Job& job, const audio::AudioProcessor& audio, const CorpusEntry& entry) {
  const auto& options = job.config.audio;
  std::string cleaned;
  std::vector<int64_t> ids;
  if (auto problem = transcript_problem(job, entry, cleaned, ids)) {
    return skip(std::move(*problem));
  }
  const std::string& wav = entry.audio;
  std::optional<WavStamp> stamp = stamp_of(wav);
  if (!stamp) return skip(fmt::format("missing audio: '{}' is not a regular file", wav));

  Outcome outcome;
  const JournalRecord* record = job.reuse ? job.journal.find(entry.id) : nullptr;
  fs::path store(job.writer.dir());
  std::error_code error;
  if (record != nullptr && record->stamp == *stamp &&
      fs::is_regular_file(store / StoreWriter::mel_path(entry.id), error) &&
      (!options.linear || fs::is_regular_file(store / StoreWriter::linear_path(entry.id), error)) &&
      (!options.waveforms ||
       fs::is_regular_file(store / StoreWriter::waveform_path(entry.id), error))) {
    outcome.row = {entry.id,
                   record->n_frames,
                   record->n_samples,
                   StoreWriter::mel_path(entry.id),
                   options.linear ? StoreWriter::linear_path(entry.id) : "-",
                   options.waveforms ? StoreWriter::waveform_path(entry.id) : "-",
                   cleaned,
                   entry.speaker};
    outcome.original_rate = record->original_rate;
    outcome.reused = true;
  } else {
    audio::Features features;
    int original_rate = 0;
    if (auto problem = compute_features(audio, options, wav, features, original_rate)) {
      return skip(std::move(*problem));
    }
    if (features.mel.size(0) < 1) {
      return skip(fmt::format("too short: '{}' gives no frame after trimming", wav));
    }
    if (too_long(job.config, features.n_samples)) {
      return skip(too_long_reason(job.config, features.n_samples));
    }
    if (auto problem = text_problem(job, ids.size(), features.n_samples)) return skip(*problem);
    outcome.row = job.writer.write_utterance(entry.id, features, cleaned);
    outcome.row.speaker = entry.speaker;
    outcome.original_rate = original_rate;
    job.journal.append(entry.id,
                       {outcome.row.n_frames, outcome.row.n_samples, original_rate, *stamp});
  }
  if (too_long(job.config, outcome.row.n_samples)) {
    return skip(too_long_reason(job.config, outcome.row.n_samples));
  }
  if (auto problem = text_problem(job, ids.size(), outcome.row.n_samples)) return skip(*problem);
  outcome.kept = true;
  return outcome;
}

// Names, in one warning, every speaker of a corpus of several with less audio than `min_minutes`
// (a one-speaker corpus's hours are in the summary line).
void warn_about_small_speakers(const std::vector<StoreSpeaker>& speakers, double min_minutes) {
  if (speakers.size() < 2) return;
  std::vector<std::string> small;
  for (const auto& speaker : speakers) {
    if (speaker.minutes < min_minutes) {
      small.push_back(fmt::format("{} ({:.1f} min, {} utterance{})", speaker.name, speaker.minutes,
                                  speaker.utterances, speaker.utterances == 1 ? "" : "s"));
    }
  }
  if (small.empty()) return;
  log::get("data")->warn(
      "{} of {} speakers have less than data.min_speaker_minutes = {} min of audio: {}; a voice "
      "from so little data is best fine-tuned from a model trained on more",
      small.size(), speakers.size(), min_minutes, fmt::join(small, ", "));
}

std::string category(const std::string& reason) { return reason.substr(0, reason.find(':')); }

// Restores torch's intra-op thread count when preprocessing ends.
class SingleThreadedTorch {
 public:
  SingleThreadedTorch() : previous_(at::get_num_threads()) { at::set_num_threads(1); }
  ~SingleThreadedTorch() { at::set_num_threads(previous_); }
  SingleThreadedTorch(const SingleThreadedTorch&) = delete;
  SingleThreadedTorch& operator=(const SingleThreadedTorch&) = delete;

 private:
  int previous_;
};

// Runs `process` on every entry of `corpus` into `outcomes`, one thread per AudioProcessor of
// `audio`, with a progress line; stops early on `stop` or on a worker's failure to write the
// store, which is rethrown. Returns the entries finished.
int64_t process_all(const Job& job, const Corpus& corpus,
                    std::vector<std::unique_ptr<audio::AudioProcessor>>& audio,
                    const std::atomic<bool>* stop, std::vector<Outcome>& outcomes) {
  auto logger = log::get("data");
  std::atomic<size_t> next{0};
  std::atomic<int64_t> finished{0};
  std::atomic<bool> failed{false};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto stop_requested = [&] { return failed.load() || (stop != nullptr && stop->load()); };
  {
    SingleThreadedTorch single_threaded;
    std::vector<std::thread> threads;
    const int workers = static_cast<int>(audio.size());
    for (int w = 0; w < workers; ++w) {
      threads.emplace_back([&, w] {
        while (!stop_requested()) {
          size_t index = next++;
          if (index >= outcomes.size()) return;
          try {
            outcomes[index] = process(job, *audio[static_cast<size_t>(w)], corpus.entries[index]);
          } catch (...) {  // the store cannot be written: stop everything
            std::lock_guard<std::mutex> lock(failure_mutex);
            if (!failure) failure = std::current_exception();
            failed = true;
            return;
          }
          ++finished;
        }
      });
    }
    Progress progress("clips", static_cast<int64_t>(outcomes.size()), logger);
    int64_t reported = 0;
    while (reported < static_cast<int64_t>(outcomes.size()) && !stop_requested()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      int64_t now = finished.load();
      if (now > reported) progress.advance(now - reported);
      reported = now;
    }
    for (auto& thread : threads) thread.join();
    if (finished.load() > reported) progress.advance(finished.load() - reported);
    progress.finish();
  }
  if (failure) std::rethrow_exception(failure);
  return finished.load();
}

// The store's rows and its errors (the corpus's problems and the skipped entries, by line),
// counted into `summary`.
void collect(const Corpus& corpus, const std::vector<Outcome>& outcomes, int sample_rate,
             PreprocessSummary& summary, std::vector<StoreRow>& rows,
             std::vector<StoreError>& errors) {
  for (const auto& problem : corpus.problems) {
    errors.push_back({problem.line, problem.id, problem.reason});
  }
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const Outcome& outcome = outcomes[i];
    if (!outcome.kept) {
      errors.push_back({corpus.entries[i].line, corpus.entries[i].id, outcome.reason});
      continue;
    }
    rows.push_back(outcome.row);
    summary.reused += outcome.reused ? 1 : 0;
    summary.frames += outcome.row.n_frames;
    summary.hours += static_cast<double>(outcome.row.n_samples) / sample_rate / 3600;
    summary.resampled_files += outcome.original_rate != sample_rate ? 1 : 0;
  }
  std::stable_sort(errors.begin(), errors.end(),
                   [](const StoreError& a, const StoreError& b) { return a.line < b.line; });
  for (const auto& e : errors) ++summary.skipped_by_reason[category(e.reason)];
}

// The worker threads to run: `requested`, else one per hardware thread; at most one per entry.
int worker_count(int requested, size_t entries) {
  int workers = requested > 0 ? requested : static_cast<int>(std::thread::hardware_concurrency());
  return std::clamp<int>(workers, 1, std::max<int>(1, entries));
}

// Counts `outcomes` into `summary`, writes errors.tsv and the metadata, warns of small speakers.
void write_tables(const config::Config& config, const Corpus& corpus,
                  const std::vector<Outcome>& outcomes, const StoreWriter& writer,
                  PreprocessSummary& summary) {
  std::vector<StoreRow> rows;
  std::vector<StoreError> errors;
  collect(corpus, outcomes, config.audio.sample_rate, summary, rows, errors);
  summary.kept = static_cast<int64_t>(rows.size());
  summary.skipped = static_cast<int64_t>(errors.size());

  writer.write_errors(errors);
  const std::vector<StoreSpeaker> speakers = count_speakers(config.audio.sample_rate, rows);
  summary.speakers = static_cast<int64_t>(speakers.size());
  writer.write_metadata(rows, split_train_val(rows, config.data.val_size, config.data.split_seed),
                        speakers);
  warn_about_small_speakers(speakers, config.data.min_speaker_minutes);
}

// Fails when no input was kept, or when more were skipped than data.max_skip_fraction allows.
void check_skip_limits(const config::Config& config, const PreprocessSummary& summary,
                       const std::string& output_dir) {
  TTS_CHECK(summary.kept > 0,
            "preprocess: none of the {} inputs was kept; '{}' gives the reason for each",
            summary.inputs, (fs::path(output_dir) / "errors.tsv").string());
  double skipped_fraction =
      static_cast<double>(summary.skipped) / static_cast<double>(summary.inputs);
  TTS_CHECK(skipped_fraction <= config.data.max_skip_fraction,
            "preprocess: {} of {} inputs ({:.1f}%) were skipped, more than data.max_skip_fraction "
            "= {} allows; see '{}' for each reason, then fix the corpus or raise the limit (--set "
            "data.max_skip_fraction=...). features.yaml was not written, so the store cannot be "
            "trained on yet",
            summary.skipped, summary.inputs, 100 * skipped_fraction, config.data.max_skip_fraction,
            (fs::path(output_dir) / "errors.tsv").string());
}

}  // namespace

PreprocessSummary preprocess_corpus(const config::Config& config,
                                    const PreprocessRequest& request) {
  TTS_USAGE_CHECK(!request.input_dir.empty(), "preprocess: no input corpus; pass --input DIR");
  TTS_USAGE_CHECK(!request.output_dir.empty(), "preprocess: no output store; pass --output DIR");
  std::error_code error;
  TTS_USAGE_CHECK(!fs::equivalent(request.input_dir, request.output_dir, error),
                  "preprocess: --output '{}' is the input corpus; choose another directory",
                  request.output_dir);
  Stopwatch watch;
  auto logger = log::get("data");
  const Corpus corpus = read_corpus(config.data, request.input_dir);
  PreprocessSummary summary;
  summary.inputs = corpus.inputs();
  TTS_CHECK(summary.inputs > 0, "the {} corpus '{}' holds no utterance", config.data.corpus,
            request.input_dir);

  text::TextProcessor text(config.text);
  std::vector<std::unique_ptr<audio::AudioProcessor>> audio;
  const int workers = worker_count(request.workers, corpus.entries.size());
  for (int w = 0; w < workers; ++w) {
    audio.push_back(std::make_unique<audio::AudioProcessor>(config.audio));
  }

  bool reuse = check_earlier_run(request.output_dir, config);
  StoreWriter writer(request.output_dir, config.audio.linear, config.audio.waveforms);
  writer.remove_temporaries();
  writer.remove_tables();
  Journal journal((fs::path(request.output_dir) / kStateDir / kJournalFile).string(), reuse);
  Job job{config, text, writer, journal, reuse};

  logger->info("preprocessing {} utterances from '{}' into '{}' with {} workers",
               corpus.entries.size(), request.input_dir, request.output_dir, workers);
  std::vector<Outcome> outcomes(corpus.entries.size());
  const int64_t finished = process_all(job, corpus, audio, request.stop, outcomes);
  if (finished < static_cast<int64_t>(outcomes.size())) {
    summary.interrupted = true;
    summary.seconds = watch.seconds();
    logger->warn(
        "interrupted after {} of {} utterances; the finished ones are kept: rerun the same command "
        "to complete the store",
        finished, outcomes.size());
    return summary;
  }

  write_tables(config, corpus, outcomes, writer, summary);
  text.report();

  std::vector<std::string> reasons;
  for (const auto& [reason, count] : summary.skipped_by_reason) {
    reasons.push_back(fmt::format("{} {}", count, reason));
  }
  summary.seconds = watch.seconds();
  logger->info(
      "kept {} of {} utterances of {} speaker{} ({} reused from an earlier run); skipped {}{}; "
      "{:.2f} h of audio, {} frames, {} files resampled; {} ({:.1f} clips/s, {} workers)",
      summary.kept, summary.inputs, summary.speakers, summary.speakers == 1 ? "" : "s",
      summary.reused, summary.skipped,
      reasons.empty() ? "" : fmt::format(" ({})", fmt::join(reasons, ", ")), summary.hours,
      summary.frames, summary.resampled_files, format_duration(summary.seconds),
      static_cast<double>(outcomes.size()) / std::max(summary.seconds, 1e-9), workers);
  if (summary.skipped > 0) {
    logger->warn("skipped inputs are listed with their reasons in '{}'",
                 (fs::path(request.output_dir) / "errors.tsv").string());
  }

  check_skip_limits(config, summary, request.output_dir);
  writer.write_features_yaml(
      config,
      {summary.kept, summary.skipped, summary.frames, summary.hours, summary.resampled_files},
      StoreSource{config.data.corpus, fs::absolute(request.input_dir).lexically_normal().string()});
  return summary;
}

}  // namespace tts::data
