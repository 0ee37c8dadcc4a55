#include "tts/data/loader.h"

#include <torch/cuda.h>
#include <torch/torch.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "tts/core/error.h"
#include "tts/core/frames.h"
#include "tts/core/logging.h"
#include "tts/core/timer.h"
#include "tts/data/text_bounds.h"
#include "tts/formats/npy.h"

namespace tts::data {
namespace {

std::vector<int64_t> lengths_of(const std::vector<Utterance>& utterances) {
  std::vector<int64_t> lengths;
  lengths.reserve(utterances.size());
  for (const auto& u : utterances) lengths.push_back(u.n_frames);
  return lengths;
}

torch::Tensor to_tensor(formats::NpyArray&& array) {
  return torch::from_blob(array.data.data(), array.shape, torch::kFloat32).clone();
}

}  // namespace

struct Loader::Impl {
  // Fixed at construction.
  std::vector<Utterance> utterances;
  std::vector<std::vector<int64_t>> token_ids;
  std::vector<int64_t> speaker_rows;  // per utterance, its row of the speaker table; or empty
  int rank = 0;
  int n_mels = 0;
  int n_linear = 0;
  bool with_linear = false;
  bool pin = false;
  bool error_on_bad_file = false;
  int r = 1;
  int num_workers = 0;
  int prefetch = 1;
  std::unique_ptr<BalancedSampler> sampler;
  LengthBuckets buckets;  // empty: each batch padded to its longest

  // The current epoch.
  std::mutex mutex;
  std::condition_variable produced;  // a batch (or an error) is ready
  std::condition_variable consumed;  // room in the queue, or stop
  std::vector<std::vector<int64_t>> batches;
  // Of each batch's global batch, from the plan: real frames and guided-attention pairs (Note
  // [Exact global batch], models/tacotron2/training/teacher_forced.h).
  std::vector<int64_t> global_frames;
  std::vector<int64_t> global_pairs;
  int64_t epoch = 0;
  int64_t next_to_load = 0;
  int64_t next_to_return = 0;
  std::map<int64_t, Batch> ready;
  std::map<int64_t, std::exception_ptr> failed;
  bool stopping = false;
  bool epoch_logged = false;
  std::vector<std::thread> workers;

  // Guarded by `mutex`.
  std::set<std::string> bad_ids;
  int64_t skipped = 0;
  int64_t skipped_this_epoch = 0;
  double wait_seconds = 0;

  // Returns the problem with utterance `index`'s files, or nullopt with `example` filled.
  std::optional<std::string> load_example(int64_t index, Example& example) const {
    const Utterance& u = utterances[index];
    if (auto problem = check_feature_file(u.mel_path, u.id, n_mels, u.n_frames)) return problem;
    if (with_linear) {
      if (u.linear_path.empty()) {
        return fmt::format(
            "utterance {}: no linear file in the store, but linear targets are "
            "needed (audio.linear or model.predict_linear)",
            u.id);
      }
      if (auto problem = check_feature_file(u.linear_path, u.id, n_linear, u.n_frames)) {
        return problem;
      }
    }
    try {
      example.mel = to_tensor(formats::read_npy(u.mel_path));
      if (with_linear) example.linear = to_tensor(formats::read_npy(u.linear_path));
    } catch (const Error& e) {
      return fmt::format("utterance {}: {}", u.id, e.what());
    }
    example.id = u.id;
    example.text = token_ids[index];
    if (!speaker_rows.empty()) example.speaker = speaker_rows[index];
    return std::nullopt;
  }

  // The batch at `position` of the epoch. A bad file skipped here still counts in its global
  // batch's frames (the others cannot know): the step's loss weights are then slightly low.
  Batch load_batch(int64_t position) {
    const std::vector<int64_t>& indices = batches[position];
    std::vector<Example> examples;
    examples.reserve(indices.size());
    for (int64_t index : indices) {
      Example example;
      auto problem = load_example(index, example);
      if (!problem) {
        examples.push_back(std::move(example));
        continue;
      }
      if (error_on_bad_file) {
        throw Error(
            fmt::format("bad feature file: {} (data.on_bad_file: error; set it to skip to "
                        "train without this utterance, and run `tts-train data check` "
                        "to list every problem)",
                        *problem));
      }
      std::lock_guard<std::mutex> lock(mutex);
      ++skipped;
      ++skipped_this_epoch;
      if (bad_ids.insert(utterances[index].id).second) {
        log::get("data")->warn("skipping a bad feature file: {}", *problem);
      }
    }
    TTS_CHECK(!examples.empty(),
              "every utterance of a batch has bad feature files (the first: {}); run `tts-train "
              "data check` to list every problem and re-run tts-train preprocess",
              utterances[indices.front()].id);
    PadTo pad_to;
    if (!buckets.empty()) {
      int64_t longest_text = 0;
      int64_t longest_frames = 0;
      for (const Example& e : examples) {
        longest_text = std::max<int64_t>(longest_text, static_cast<int64_t>(e.text.size()));
        longest_frames = std::max<int64_t>(longest_frames, e.mel.size(0));
      }
      const std::optional<int> bucket = buckets.bucket_of(longest_text, longest_frames);
      TTS_CHECK(bucket.has_value(),
                "a batch of {} symbols and {} frames is longer than every length bucket ({})",
                longest_text, longest_frames, buckets.describe());
      pad_to = {buckets.text[*bucket], buckets.frames[*bucket]};
    }
    Batch batch = collate(std::move(examples), r, pad_to);
    batch.global_real_frames = global_frames[position];
    batch.global_attention_pairs = global_pairs[position];
    return pin ? batch.pin_memory() : batch;
  }

  void work() {
    for (;;) {
      int64_t index;
      {
        std::unique_lock<std::mutex> lock(mutex);
        consumed.wait(lock, [&] {
          return stopping || next_to_load >= static_cast<int64_t>(batches.size()) ||
                 next_to_load < next_to_return + prefetch;
        });
        if (stopping || next_to_load >= static_cast<int64_t>(batches.size())) return;
        index = next_to_load++;
      }
      try {
        Batch batch = load_batch(index);
        std::lock_guard<std::mutex> lock(mutex);
        ready.emplace(index, std::move(batch));
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        failed.emplace(index, std::current_exception());
      }
      produced.notify_all();
    }
  }

  // At the end of the epoch: logs the bad files skipped in it, once.
  void end_epoch() {
    if (!epoch_logged && skipped_this_epoch > 0) {
      log::get("data")->warn("epoch {}: {} utterances left out for bad feature files ({} so far)",
                             epoch, skipped_this_epoch, skipped);
    }
    epoch_logged = true;
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    consumed.notify_all();
    for (auto& worker : workers) worker.join();
    workers.clear();
  }
};

Loader::Loader(const FeatureStore& store, std::vector<Utterance> utterances,
               const config::Config& config, const Phase& phase, Tokenizer tokenizer, int rank,
               int world_size, bool pin_memory, const std::vector<std::string>& speakers)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  auto logger = log::get("data");
  std::map<std::string, int64_t> rows;
  for (size_t i = 0; i < speakers.size(); ++i) rows.emplace(speakers[i], static_cast<int64_t>(i));
  size_t before = utterances.size();
  for (auto& u : utterances) {
    std::vector<int64_t> ids = tokenizer(u.text);
    if (ids.empty()) {
      logger->warn("utterance {}: its text '{}' gives no symbols; left out", u.id, u.text);
      continue;
    }
    // A store may hold what preprocess would have skipped: batches are sized by the longest text.
    const double seconds = static_cast<double>(u.n_frames) * config.audio.hop_length /
                           static_cast<double>(config.audio.sample_rate);
    if (auto problem = text_bound_problem(static_cast<int64_t>(ids.size()), seconds)) {
      logger->warn("utterance {}: {}; left out", u.id, *problem);
      continue;
    }
    if (!rows.empty()) {
      const auto row = rows.find(u.speaker);
      TTS_CHECK(row != rows.end(),
                "utterance {}: its speaker '{}' is not in the model's speaker table ({} speakers)",
                u.id, u.speaker, rows.size());
      s.speaker_rows.push_back(row->second);
    }
    s.token_ids.push_back(std::move(ids));
    s.utterances.push_back(std::move(u));
  }
  if (s.utterances.size() != before) {
    logger->warn("{} of {} utterances left out: no symbols in their text, or too many",
                 before - s.utterances.size(), before);
  }
  s.rank = rank;
  s.n_mels = store.n_mels();
  s.n_linear = store.n_linear();
  s.with_linear = config.audio.linear || config.model.predict_linear;
  s.pin = pin_memory;
  s.error_on_bad_file = config.data.on_bad_file == config::OnBadFile::kError;
  s.r = phase.r;
  s.num_workers = config.data.num_workers;
  s.prefetch = config.data.prefetch_batches;
  s.sampler =
      std::make_unique<BalancedSampler>(lengths_of(s.utterances), phase.batch_size, world_size,
                                        config.train.seed, config.data.sort_pool_batches);
}

Loader::~Loader() { impl_->stop(); }

void Loader::start_epoch(int64_t epoch, int64_t skip_batches) {
  Impl& s = *impl_;
  s.stop();
  EpochPlan plan = s.sampler->plan(epoch);
  TTS_CHECK(skip_batches >= 0 && skip_batches <= static_cast<int64_t>(plan.size()),
            "loader: cannot skip {} batches of an epoch of {}", skip_batches, plan.size());
  std::vector<std::vector<int64_t>> batches;
  std::vector<int64_t> global_frames;
  std::vector<int64_t> global_pairs;
  for (size_t step = static_cast<size_t>(skip_batches); step < plan.size(); ++step) {
    int64_t frames = 0;
    int64_t pairs = 0;
    for (const auto& rank_batch : plan[step]) {
      for (int64_t index : rank_batch) {
        const int64_t n = s.utterances[index].n_frames;
        frames += n;
        pairs += decoder_steps(n, s.r) * static_cast<int64_t>(s.token_ids[index].size());
      }
    }
    global_frames.push_back(frames);
    global_pairs.push_back(pairs);
    batches.push_back(std::move(plan[step][s.rank]));
  }
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.batches = std::move(batches);
    s.global_frames = std::move(global_frames);
    s.global_pairs = std::move(global_pairs);
    s.epoch = epoch;
    s.next_to_load = 0;
    s.next_to_return = 0;
    s.ready.clear();
    s.failed.clear();
    s.stopping = false;
    s.epoch_logged = false;
    s.skipped_this_epoch = 0;
  }
  for (int i = 0; i < s.num_workers; ++i) s.workers.emplace_back([&s] { s.work(); });
}

std::optional<Batch> Loader::next() {
  Impl& s = *impl_;
  if (s.num_workers == 0) {
    if (s.next_to_return >= static_cast<int64_t>(s.batches.size())) {
      s.end_epoch();
      return std::nullopt;
    }
    Stopwatch watch;
    Batch batch = s.load_batch(s.next_to_return++);
    s.wait_seconds += watch.seconds();
    return batch;
  }
  std::unique_lock<std::mutex> lock(s.mutex);
  if (s.next_to_return >= static_cast<int64_t>(s.batches.size())) {
    s.end_epoch();
    return std::nullopt;
  }
  Stopwatch watch;
  s.produced.wait(lock, [&] {
    return s.ready.count(s.next_to_return) > 0 || s.failed.count(s.next_to_return) > 0;
  });
  s.wait_seconds += watch.seconds();
  if (auto failed = s.failed.find(s.next_to_return); failed != s.failed.end()) {
    std::rethrow_exception(failed->second);
  }
  auto found = s.ready.find(s.next_to_return);
  Batch batch = std::move(found->second);
  s.ready.erase(found);
  ++s.next_to_return;
  lock.unlock();
  s.consumed.notify_all();
  return batch;
}

double Loader::wait_seconds() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->wait_seconds;
}

int64_t Loader::batches_per_epoch() const { return impl_->sampler->batches_per_epoch(); }

int64_t Loader::skipped_utterances() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->skipped;
}

BalancedSampler::Report Loader::report(int64_t epoch) const {
  return impl_->sampler->report(epoch, impl_->r);
}

void Loader::set_length_buckets(LengthBuckets buckets) {
  Impl& s = *impl_;
  if (!buckets.empty()) {
    TTS_CHECK(buckets.frame_multiple % s.r == 0,
              "length buckets with frame boundaries in multiples of {} for a loader of r = {}",
              buckets.frame_multiple, s.r);
    for (size_t i = 0; i < s.utterances.size(); ++i) {
      TTS_CHECK(
          buckets.bucket_of(static_cast<int64_t>(s.token_ids[i].size()), s.utterances[i].n_frames)
              .has_value(),
          "utterance {} ({} symbols, {} frames) is longer than every length bucket ({})",
          s.utterances[i].id, s.token_ids[i].size(), s.utterances[i].n_frames, buckets.describe());
    }
  }
  s.stop();
  s.buckets = std::move(buckets);
}

const LengthBuckets& Loader::length_buckets() const { return impl_->buckets; }

BatchStats Loader::padding_report(int64_t epoch, const LengthBuckets& buckets) const {
  return measure_plan(impl_->sampler->plan(epoch), lengths_of(impl_->utterances), impl_->r,
                      text_lengths(), buckets);
}

std::vector<int64_t> Loader::text_lengths() const {
  std::vector<int64_t> lengths;
  lengths.reserve(impl_->token_ids.size());
  for (const auto& ids : impl_->token_ids) lengths.push_back(static_cast<int64_t>(ids.size()));
  return lengths;
}

const std::vector<Utterance>& Loader::utterances() const { return impl_->utterances; }

const BalancedSampler& Loader::sampler() const { return *impl_->sampler; }

}  // namespace tts::data
