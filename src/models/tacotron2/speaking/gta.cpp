#include "tts/models/tacotron2/speaking/gta.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <thread>

#include "tts/audio/audio_io.h"
#include "tts/audio/audio_processor.h"
#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/core/hash.h"
#include "tts/core/json_writer.h"
#include "tts/core/logging.h"
#include "tts/core/printable.h"
#include "tts/data/batch.h"
#include "tts/data/corpus.h"
#include "tts/data/feature_store.h"
#include "tts/data/store_writer.h"
#include "tts/dist/communicator.h"
#include "tts/dist/rank_info.h"
#include "tts/formats/npy.h"
#include "tts/models/keyed_dropout.h"
#include "tts/models/tacotron2/layers/batch_context.h"
#include "tts/models/tacotron2/layers/network.h"
#include "tts/models/tacotron2/speaking/trained_model.h"
#include "tts/text/text_processor.h"

namespace tts::tacotron2 {
namespace fs = std::filesystem;
namespace {

// Whether `path` is already a complete float32 array of `shape`.
bool already_done(const std::string& path, const std::vector<int64_t>& shape) {
  if (!fs::exists(path)) return false;
  try {
    formats::NpyHeader header = formats::read_npy_header(path);
    int64_t count = 1;
    for (int64_t d : shape) count *= d;
    return header.dtype == "<f4" && header.shape == shape &&
           fs::file_size(path) == header.data_offset + static_cast<size_t>(count * 4);
  } catch (const Error&) {
    return false;
  }
}

// The store a vocoder fine-tunes on: the predicted mels beside the waveforms they are aligned
// with (copied from the source store, so the folder stands alone), the source's split, and its
// settings. Rank 0 writes the tables once every rank's files are there.
void write_store_tables(const std::string& out, const data::FeatureStore& source,
                        const config::Config& config) {
  auto rows_of = [](const std::vector<data::Utterance>& list) {
    std::vector<data::StoreRow> rows;
    for (const data::Utterance& u : list) {
      rows.push_back({u.id, u.n_frames, u.n_samples, data::StoreWriter::mel_path(u.id), "-",
                      data::StoreWriter::waveform_path(u.id), u.text, u.speaker});
    }
    return rows;
  };
  data::Split split{rows_of(source.train()), rows_of(source.val())};
  std::vector<data::StoreRow> all = split.train;
  all.insert(all.end(), split.val.begin(), split.val.end());
  data::StoreWriter writer(out, false, true);
  writer.write_metadata(all, split, data::count_speakers(config.audio.sample_rate, all));
  config::Config settings = config;
  settings.audio.linear = false;
  settings.audio.waveforms = true;
  data::StoreCounts counts;
  counts.kept = static_cast<int64_t>(all.size());
  for (const auto& row : all) counts.frames += row.n_frames;
  counts.hours = static_cast<double>(counts.frames) * config.audio.hop_length /
                 config.audio.sample_rate / 3600.0;
  writer.write_features_yaml(settings, counts);
}

// Note [GTA provenance]: OUT/gta.yaml says what made the mels in OUT: the checkpoint's step, a
// digest of its weights, its config's fingerprint and the dropout mode. A rerun with the same
// keeps every complete file (resumable); a rerun with anything else (a later checkpoint, another
// mode) or over files of unknown origin removes ours first and computes everything. Rank 0
// decides and writes gta.yaml before any mel is written; the other workers (no communicator)
// wait for gta.yaml to name this run's provenance, so none of them reuses a stale file.
constexpr const char* kProvenanceFile = "gta.yaml";
constexpr int64_t kMaxProvenanceBytes = 64 * 1024;

uint64_t weights_digest(const torch::nn::Module& model) {
  uint64_t digest = 0;
  for (const auto& item : model.named_parameters()) {
    torch::Tensor t = item.value().detach().to(torch::kCPU).contiguous();
    digest = hash_bytes(t.data_ptr(), t.nbytes(),
                        static_cast<int64_t>(hash_id(item.key(), static_cast<int64_t>(digest))));
  }
  return digest;
}

// The lines of gta.yaml that identify the mels (the first ones) and what it says for people.
std::string provenance(const TrainedModel& trained, const models::GtaRequest& request) {
  return fmt::format(
      "# written by tts-train gta: what made the mels in this folder (a rerun with another\n"
      "# checkpoint or mode recomputes them all)\n"
      "step: {}\nweights: {:016x}\nconfig: {}\nprenet_dropout: {}\ncheckpoint: {}\n",
      trained.step, weights_digest(*trained.model), config::fingerprint(trained.config),
      request.inference_dropout ? "keyed" : "off", json_string(trained.source));
}

bool same_provenance(const std::string& a, const std::string& b) {
  auto identity = [](const std::string& text) { return text.substr(0, text.find("checkpoint:")); };
  return identity(a) == identity(b);
}

std::optional<std::string> read_provenance(const std::string& out) {
  const fs::path path = fs::path(out) / kProvenanceFile;
  std::error_code error;
  if (!fs::is_regular_file(fs::symlink_status(path, error))) return std::nullopt;
  if (fs::file_size(path, error) > static_cast<uintmax_t>(kMaxProvenanceBytes)) return "";
  return read_file(path.string());
}

// Our files of `ids` in OUT (regular files with our names only), and the store's tables.
void remove_outputs(const std::string& out, const std::vector<data::Utterance>& all) {
  std::vector<fs::path> ours{fs::path(out) / "features.yaml", fs::path(out) / "filelist.txt"};
  for (const data::Utterance& u : all) {
    ours.push_back(fs::path(out) / (u.id + ".npy"));
    ours.push_back(fs::path(out) / data::StoreWriter::mel_path(u.id));
    ours.push_back(fs::path(out) / data::StoreWriter::waveform_path(u.id));
  }
  std::error_code error;
  for (const fs::path& path : ours) {
    if (fs::is_regular_file(fs::symlink_status(path, error))) fs::remove(path, error);
  }
}

void settle_provenance(const std::string& out, const std::string& ours,
                       const std::vector<data::Utterance>& all, const models::GtaRequest& request,
                       spdlog::logger& log) {
  const fs::path path = fs::path(out) / kProvenanceFile;
  if (request.rank == 0) {
    std::optional<std::string> before = read_provenance(out);
    if (!before || !same_provenance(*before, ours)) {
      if (before) {
        log.info("{} holds the mels of another checkpoint or mode; computing them all again", out);
      }
      remove_outputs(out, all);
      write_file_atomic(path.string(), ours);
    }
    return;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  while (true) {
    std::optional<std::string> now = read_provenance(out);
    if (now && same_provenance(*now, ours)) return;
    TTS_CHECK(std::chrono::steady_clock::now() < deadline,
              "gta worker {}: {} does not name this run's checkpoint after 5 minutes: worker 0 "
              "decides what is stale and writes it; is worker 0 running (its log says why not)?",
              request.rank, path.string());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// The audio file of every utterance of the corpus in `dir` (laid out as `options.corpus`), by id;
// throws UsageError, before anything is computed, when one of `wanted` has none there.
std::map<std::string, std::string> corpus_audio(const config::DataOptions& options,
                                                const std::string& dir,
                                                const std::vector<data::Utterance>& wanted) {
  const data::Corpus corpus = [&] {
    try {
      return data::read_corpus(options, dir);
    } catch (const UsageError& e) {
      throw UsageError(fmt::format(
          "--wavs {}: expected the {} corpus the store was made from (--corpus names another "
          "layout): {}",
          dir, options.corpus, e.what()));
    }
  }();
  std::map<std::string, std::string> audio, problems;
  for (const data::CorpusEntry& entry : corpus.entries) audio.emplace(entry.id, entry.audio);
  for (const data::CorpusProblem& problem : corpus.problems) {
    problems.emplace(problem.id, problem.reason);
  }
  std::vector<std::string> missing;
  for (const data::Utterance& u : wanted) {
    if (audio.count(u.id) > 0) continue;
    auto why = problems.find(u.id);
    missing.push_back(printable(u.id) + ": " +
                      (why != problems.end() ? why->second : "not in the corpus"));
  }
  TTS_USAGE_CHECK(missing.empty(),
                  "--wavs {}: {} utterance(s) of the store have no audio there ({}{}); give the "
                  "corpus the store was made from, and its layout (--corpus)",
                  dir, missing.size(), missing.front(), missing.size() > 1 ? "; ..." : "");
  return audio;
}

// The trimmed waveform the store's mel of `u` was computed from, recomputed from the corpus as
// preprocess did (the checkpoint's audio settings); its frames must be the store's.
formats::NpyArray corpus_waveform(const audio::AudioProcessor& processor,
                                  const config::AudioOptions& options, const std::string& path,
                                  const data::Utterance& u) {
  audio::Features features = processor.compute(audio::read_audio(path, options), false, true);
  TTS_CHECK(features.mel.size(0) == u.n_frames && features.n_samples == u.n_samples,
            "{} (utterance {}): its audio gives {} frames and {} samples under the checkpoint's "
            "audio settings, the store's mel has {} frames of {} samples: --wavs is not the "
            "corpus the store was made from, or the file changed since",
            path, printable(u.id), features.mel.size(0), features.n_samples, u.n_frames,
            u.n_samples);
  torch::Tensor wave = features.waveform.contiguous();
  formats::NpyArray array;
  array.shape = {wave.size(0)};
  array.data.assign(wave.data_ptr<float>(), wave.data_ptr<float>() + wave.numel());
  return array;
}

// `request` with what the store recorded of its corpus (features.yaml) where it says nothing:
// the corpus layout of --wavs, and --wavs itself for a store that keeps no waveforms.
models::GtaRequest with_recorded_corpus(models::GtaRequest request) {
  const data::StoreSettings settings = data::read_store_settings(request.data_dir);
  const std::optional<data::StoreSource>& source = settings.source;
  if (!source) return request;
  if (!request.corpus) request.corpus = source->layout;
  if (request.wavs_dir.empty() && !settings.config.audio.waveforms) {
    std::error_code ec;
    if (!fs::is_directory(source->folder, ec)) {
      // Moved, or a store from another machine: the mels alone, as without a record.
      if (request.rank == 0) {
        log::get("gta")->warn(
            "{}/features.yaml says it was made from {}, which is not a folder here; give --wavs "
            "CORPUS for the audio",
            request.data_dir, source->folder);
      }
      return request;
    }
    request.wavs_dir = source->folder;
    if (request.rank == 0) {
      log::get("gta")->info("the audio comes from the corpus {} was made from: {} ({})",
                            request.data_dir, source->folder, source->layout);
    }
  }
  return request;
}

// One rank's gta: the utterances it handles, where their outputs go, and its steps in order.
class GtaRun {
 public:
  GtaRun(TrainedModel& trained, const models::GtaRequest& request, const torch::Device& device)
      : trained_(trained),
        request_(with_recorded_corpus(request)),
        config_(trained.config),
        device_(device),
        store_(data::FeatureStore::open(request.data_dir, config_)),
        text_(config_.text),
        log_(log::get("gta")) {
    all_ = store_.train();
    all_.insert(all_.end(), store_.val().begin(), store_.val().end());
    std::sort(all_.begin(), all_.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
    for (size_t i = static_cast<size_t>(request_.rank); i < all_.size();
         i += static_cast<size_t>(request_.world_size)) {
      share_.push_back(all_[i]);
    }
    // OUT is a feature store a vocoder trains on: the predicted mels beside the waveforms, the
    // store's own or, from a store that keeps none, recomputed from the corpus as preprocess did.
    store_waveforms_ = !all_.empty() && !all_.front().waveform_path.empty();
    as_store_ = store_waveforms_ || !request_.wavs_dir.empty();
  }

  models::GtaSummary run() {
    prepare_outputs();
    models::GtaSummary summary;
    predict(inputs(summary), summary);
    log_->info("rank {}: {} ground-truth-aligned mels written to {}, {} already there",
               request_.rank, summary.written, request_.out_dir, summary.reused);
    text_.report();  // the characters the symbol set dropped, counted
    finish();
    return summary;
  }

 private:
  std::string mel_path(const std::string& id) const {
    return (fs::path(request_.out_dir) / (id + ".npy")).string();
  }
  std::string store_path(const std::string& relative) const {
    return (fs::path(request_.out_dir) / relative).string();
  }
  bool complete(const data::Utterance& u) const {
    return already_done(mel_path(u.id), {config_.audio.n_mels, u.n_frames}) &&
           (!as_store_ ||
            (already_done(store_path(data::StoreWriter::mel_path(u.id)),
                          {u.n_frames, config_.audio.n_mels}) &&
             already_done(store_path(data::StoreWriter::waveform_path(u.id)), {u.n_samples})));
  }

  // OUT's folders, what made its files (older outputs of another checkpoint removed) and, with
  // --wavs, filelist.txt; says what OUT will and will not be.
  void prepare_outputs() {
    if (!request_.wavs_dir.empty()) {
      config::DataOptions layout = config_.data;
      if (request_.corpus) layout.corpus = *request_.corpus;
      audio_of_ = corpus_audio(layout, request_.wavs_dir, all_);
    }
    if (!as_store_ && request_.rank == 0) {
      log_->info(
          "{} keeps no waveforms and no --wavs was given: {} holds the mels alone (ID.npy), not "
          "a store a vocoder trains on; give --wavs CORPUS (the corpus the store was made from) "
          "for one",
          request_.data_dir, request_.out_dir);
    }
    if (config_.audio.trim && !request_.wavs_dir.empty() && request_.rank == 0) {
      log_->warn(
          "audio.trim is true: the store's mels start after the trimmed silence, so they do "
          "not align with the WAVs filelist.txt names (the input of other frameworks' "
          "fine-tuning); the store in {} pairs each mel with its trimmed waveform",
          request_.out_dir);
    }
    if (as_store_) {
      folders_.emplace(request_.out_dir, false, true);  // creates OUT and the store's folders
    } else {
      create_folder(request_.out_dir);
    }
    settle_provenance(request_.out_dir, provenance(trained_, request_), all_, request_, *log_);
    if (request_.rank == 0 && !request_.wavs_dir.empty()) {
      std::string filelist;
      for (const auto& u : all_) filelist += audio_of_.at(u.id) + "|" + mel_path(u.id) + "\n";
      write_file_atomic((fs::path(request_.out_dir) / "filelist.txt").string(), filelist);
    }
  }

  // The share's utterances still to compute, with their waveforms written into OUT first; the
  // complete ones counted as reused. Longest text first, as the batches NVIDIA's collate makes
  // (its convolutions see the padding).
  std::vector<data::Example> inputs(models::GtaSummary& summary) {
    std::optional<audio::AudioProcessor> processor;
    if (as_store_ && !store_waveforms_) processor.emplace(config_.audio);
    std::vector<data::Example> todo;
    for (const data::Utterance& u : share_) {
      if (complete(u)) {
        ++summary.reused;
        continue;
      }
      if (store_waveforms_) {
        formats::NpyArray wave = formats::read_npy(u.waveform_path);
        TTS_CHECK(wave.shape == std::vector<int64_t>{u.n_samples},
                  "{} (utterance {}): a waveform of shape [{}], the store's tables promise [{}]; "
                  "run `tts-train data check {}`",
                  u.waveform_path, u.id, fmt::join(wave.shape, ", "), u.n_samples,
                  request_.data_dir);
        formats::write_npy(store_path(data::StoreWriter::waveform_path(u.id)), wave);
      } else if (as_store_) {
        formats::write_npy(store_path(data::StoreWriter::waveform_path(u.id)),
                           corpus_waveform(*processor, config_.audio, audio_of_.at(u.id), u));
      }
      if (auto problem =
              data::check_feature_file(u.mel_path, u.id, config_.audio.n_mels, u.n_frames)) {
        throw Error(fmt::format("{}; run `tts-train data check {}` and re-run tts-train preprocess",
                                *problem, request_.data_dir));
      }
      formats::NpyArray mel = formats::read_npy(u.mel_path);
      todo.push_back({u.id,
                      text_.to_ids(u.text),
                      torch::from_blob(mel.data.data(), mel.shape, torch::kFloat32).clone(),
                      {}});
      // A model of several speakers reads each utterance's voice from its row of the
      // checkpoint's table.
      if (config_.model.speakers > 0) {
        todo.back().speaker = speaker_row(config_, trained_.speakers, u.speaker, trained_.source);
      }
    }
    std::stable_sort(todo.begin(), todo.end(),
                     [](const auto& a, const auto& b) { return a.text.size() > b.text.size(); });
    return todo;
  }

  // The postnet mels of `todo`, teacher-forced in batches of the phase's size, written as
  // OUT/ID.npy [n_mels, frames] (and into the store, [frames, n_mels]).
  void predict(const std::vector<data::Example>& todo, models::GtaSummary& summary) {
    torch::NoGradGuard no_grad;
    const data::Phase phase = trained_.phase;  // in force when written
    const size_t batch_size = static_cast<size_t>(std::max(phase.batch_size, 1));
    for (size_t start = 0; start < todo.size(); start += batch_size) {
      std::vector<data::Example> examples(
          todo.begin() + static_cast<std::ptrdiff_t>(start),
          todo.begin() + static_cast<std::ptrdiff_t>(std::min(todo.size(), start + batch_size)));
      data::Batch batch = data::collate(std::move(examples), phase.r).to(device_);
      // The prenet's masks are each utterance's own (Note [Dropout keyed by utterance]), from the
      // checkpoint's seed and step: the same mels on a rerun, in any batch, on any worker.
      const models::KeyedDropout dropout(static_cast<uint64_t>(config_.train.seed), trained_.step,
                                         batch.ids);
      BatchContext context;
      context.dropout = &dropout;
      context.text_lengths = batch.text_length_values;
      context.mel_lengths = batch.mel_length_values;
      context.prenet_dropout = request_.inference_dropout;
      tacotron2::TacotronOutput out = trained_.model->forward(
          batch.text, batch.text_lengths, batch.mel, batch.mel_lengths, context, batch.speakers);
      torch::Tensor mels = out.mel_postnet.to(torch::kCPU);
      for (int64_t b = 0; b < batch.size(); ++b) {
        const int64_t frames = batch.mel_length_values[static_cast<size_t>(b)];
        const std::string& id = batch.ids[static_cast<size_t>(b)];
        torch::Tensor ours = mels[b].narrow(0, 0, frames).contiguous();  // [frames, n_mels]
        if (as_store_) {
          formats::write_npy(store_path(data::StoreWriter::mel_path(id)), ours.data_ptr<float>(),
                             ours.sizes().vec());
        }
        torch::Tensor mel = ours.t().contiguous();  // [n_mels, frames], NVIDIA's and jik876's
        formats::write_npy(mel_path(id), mel.data_ptr<float>(), mel.sizes().vec());
        ++summary.written;
      }
    }
  }

  // The rank that finds every utterance's files complete writes the tables (with several ranks,
  // the last to finish; two that finish together write the same files, atomically). A rank that
  // failed leaves the store without tables: running gta again completes it.
  void finish() {
    if (!as_store_ ||
        !std::all_of(all_.begin(), all_.end(), [&](const auto& u) { return complete(u); })) {
      return;
    }
    write_store_tables(request_.out_dir, store_, config_);
    log_->info(
        "{} is a feature store of the predicted mels and their waveforms: fine-tune a vocoder "
        "on it with tts-train train --config VOCODER.yaml --data {} (--init-from a trained "
        "vocoder)",
        request_.out_dir, request_.out_dir);
  }

  TrainedModel& trained_;
  const models::GtaRequest request_;
  const config::Config& config_;
  torch::Device device_;
  data::FeatureStore store_;
  text::TextProcessor text_;
  std::shared_ptr<spdlog::logger> log_;
  std::vector<data::Utterance> all_, share_;
  bool store_waveforms_ = false;
  bool as_store_ = false;
  std::map<std::string, std::string> audio_of_;
  std::optional<data::StoreWriter> folders_;
};

}  // namespace

models::GtaSummary run_gta(const models::TrainedCheckpoint& read,
                           const models::GtaRequest& request) {
  dist::RankInfo rank;
  rank.rank = request.rank;
  rank.world_size = request.world_size;
  rank.local_rank = request.local_rank;
  rank.local_world_size = request.local_world_size;
  // Placed as a training rank of gloo is (dist::resolve_placement): ranks share GPUs round robin.
  // The model is built for that device: its recurrences and decoder step are decided for it.
  const torch::Device device =
      dist::resolve_placement(rank, read.config.train.device, config::Backend::kGloo).device;
  TrainedModel trained = trained_model(read, device);
  return GtaRun(trained, request, device).run();
}

}  // namespace tts::tacotron2
