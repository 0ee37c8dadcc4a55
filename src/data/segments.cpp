#include "tts/data/segments.h"

#include <torch/torch.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>

#include "tts/core/error.h"
#include "tts/core/hash.h"
#include "tts/core/timer.h"
#include "tts/formats/npy.h"

namespace tts::data {
namespace {

formats::NpyArray read_checked(const std::string& path, const std::string& id,
                               const std::vector<int64_t>& shape, const char* what) {
  formats::NpyArray array;
  try {
    array = formats::read_npy(path);
  } catch (const Error& e) {
    throw Error(feature_file_error(path, id, e));
  }
  TTS_CHECK(array.shape == shape,
            "{} (utterance {}): the {} has shape [{}], the store's tables promise [{}]; run "
            "`tts-train data check` and re-run tts-train preprocess",
            path, id, what, fmt::join(array.shape, ", "), fmt::join(shape, ", "));
  return array;
}

}  // namespace

SegmentBatch SegmentBatch::to(const torch::Device& device, bool non_blocking) const {
  return {mel.to(device, non_blocking), audio.to(device, non_blocking),
          speakers.defined() ? speakers.to(device, non_blocking) : speakers, ids};
}

SegmentBatch SegmentBatch::pin_memory() const {
  return {mel.pin_memory(), audio.pin_memory(),
          speakers.defined() ? speakers.pin_memory() : speakers, ids};
}

int64_t window_start(int64_t seed, int64_t epoch, const std::string& id, int64_t n_frames,
                     int64_t frames) {
  const int64_t choices = n_frames - frames + 1;
  if (choices <= 1) return 0;
  const uint64_t key = hash_id(
      id, static_cast<int64_t>(mix64(static_cast<uint64_t>(seed)) ^ static_cast<uint64_t>(epoch)));
  return static_cast<int64_t>(key % static_cast<uint64_t>(choices));
}

void read_window(const Utterance& u, int64_t start, const SegmentSpec& spec, int64_t n_mels,
                 float* mel, float* audio) {
  TTS_CHECK(!u.waveform_path.empty(),
            "utterance {}: the store keeps no waveform for it; re-run tts-train preprocess with "
            "audio.waveforms: true",
            u.id);
  formats::NpyArray mels = read_checked(u.mel_path, u.id, {u.n_frames, n_mels}, "mel");
  formats::NpyArray wave = read_checked(u.waveform_path, u.id, {u.n_samples}, "waveform");
  const int64_t width = spec.frames + 2 * spec.context;
  for (int64_t k = 0; k < width; ++k) {
    const int64_t frame = start - spec.context + k;
    const bool inside_window = k >= spec.context && k < spec.context + spec.frames;
    const float* row = nullptr;
    if (frame >= 0 && frame < u.n_frames) {
      row = mels.data.data() + frame * n_mels;
    } else if (!inside_window) {  // context: the edge frame repeats
      row = mels.data.data() + std::clamp<int64_t>(frame, 0, u.n_frames - 1) * n_mels;
    }
    for (int64_t m = 0; m < n_mels; ++m) mel[m * width + k] = row ? row[m] : spec.mel_floor;
  }
  const int64_t samples = spec.frames * spec.hop;
  const int64_t first = start * spec.hop;
  const int64_t available = std::clamp<int64_t>(u.n_samples - first, 0, samples);
  std::copy_n(wave.data.data() + first, available, audio);
  std::fill(audio + available, audio + samples, 0.0f);
}

WholeUtterance read_utterance(const Utterance& u, int64_t n_mels) {
  formats::NpyArray mels = read_checked(u.mel_path, u.id, {u.n_frames, n_mels}, "mel");
  formats::NpyArray wave = read_checked(u.waveform_path, u.id, {u.n_samples}, "waveform");
  WholeUtterance whole;
  whole.mel =
      torch::from_blob(mels.data.data(), {u.n_frames, n_mels}, torch::kFloat32).t().contiguous();
  whole.waveform = torch::from_blob(wave.data.data(), {u.n_samples}, torch::kFloat32).clone();
  return whole;
}

struct SegmentLoader::Impl {
  std::vector<Utterance> utterances;
  std::vector<int64_t> speaker_rows;  // per utterance, its row of the speaker table; or empty
  int64_t n_mels = 0;
  SegmentSpec spec;
  int batch_size = 1;
  int rank = 0;
  int world_size = 1;
  int64_t seed = 0;
  size_t prefetch = 1;
  bool background = true;
  bool pin = false;

  int64_t epoch = 0;
  std::vector<std::vector<int64_t>> batches;
  size_t next_to_return = 0;
  double waited = 0;

  std::mutex mutex;
  std::condition_variable produced;
  std::condition_variable consumed;
  std::deque<SegmentBatch> ready;
  std::exception_ptr failure;
  size_t next_to_load = 0;
  bool stopping = false;
  std::thread worker;

  SegmentBatch load(size_t position) const {
    const std::vector<int64_t>& indices = batches[position];
    const auto b = static_cast<int64_t>(indices.size());
    const int64_t width = spec.frames + 2 * spec.context;
    SegmentBatch batch;
    batch.mel = torch::empty({b, n_mels, width}, torch::kFloat32);
    batch.audio = torch::empty({b, 1, spec.frames * spec.hop}, torch::kFloat32);
    if (!speaker_rows.empty()) batch.speakers = torch::empty({b}, torch::kInt64);
    for (int64_t i = 0; i < b; ++i) {
      const Utterance& u = utterances[static_cast<size_t>(indices[i])];
      const int64_t start = window_start(seed, epoch, u.id, u.n_frames, spec.frames);
      read_window(u, start, spec, n_mels, batch.mel[i].data_ptr<float>(),
                  batch.audio[i].data_ptr<float>());
      batch.ids.push_back(u.id);
      if (!speaker_rows.empty()) {
        batch.speakers.data_ptr<int64_t>()[i] = speaker_rows[static_cast<size_t>(indices[i])];
      }
    }
    return pin ? batch.pin_memory() : batch;
  }

  void work() {
    for (;;) {
      size_t position;
      {
        std::unique_lock<std::mutex> lock(mutex);
        consumed.wait(lock, [&] { return stopping || ready.size() < prefetch; });
        if (stopping || next_to_load >= batches.size() || failure) return;
        position = next_to_load++;
      }
      try {
        SegmentBatch batch = load(position);
        std::lock_guard<std::mutex> lock(mutex);
        ready.push_back(std::move(batch));
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        failure = std::current_exception();
      }
      produced.notify_one();
    }
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    consumed.notify_all();
    if (worker.joinable()) worker.join();
  }
};

SegmentLoader::SegmentLoader(std::vector<Utterance> utterances, int64_t n_mels, SegmentSpec spec,
                             int batch_size, int rank, int world_size, int64_t seed,
                             int prefetch_batches, bool background, bool pin_memory,
                             const std::vector<std::string>& speakers)
    : impl_(std::make_unique<Impl>()) {
  const int64_t global = static_cast<int64_t>(batch_size) * world_size;
  TTS_USAGE_CHECK(static_cast<int64_t>(utterances.size()) >= global,
                  "{} training utterances cannot fill one global batch of {} ({} rank(s) x "
                  "train.batch_size {}): lower train.batch_size or use more data",
                  utterances.size(), global, world_size, batch_size);
  TTS_CHECK(spec.frames >= 1 && spec.hop >= 1 && spec.context >= 0,
            "segments: a window needs frames >= 1 and hop >= 1, found {} and {}", spec.frames,
            spec.hop);
  Impl& s = *impl_;
  if (!speakers.empty()) {
    std::map<std::string, int64_t> rows;
    for (size_t i = 0; i < speakers.size(); ++i) rows.emplace(speakers[i], static_cast<int64_t>(i));
    for (const Utterance& u : utterances) {
      const auto row = rows.find(u.speaker);
      TTS_CHECK(row != rows.end(),
                "utterance {}: its speaker '{}' is not in the model's speaker table ({} speakers: "
                "{})",
                u.id, u.speaker, speakers.size(), fmt::join(speakers, ", "));
      s.speaker_rows.push_back(row->second);
    }
  }
  s.utterances = std::move(utterances);
  s.n_mels = n_mels;
  s.spec = spec;
  s.batch_size = batch_size;
  s.rank = rank;
  s.world_size = world_size;
  s.seed = seed;
  s.prefetch = static_cast<size_t>(std::max(prefetch_batches, 1));
  s.background = background;
  s.pin = pin_memory;
}

SegmentLoader::~SegmentLoader() { impl_->stop(); }

std::vector<std::vector<int64_t>> SegmentLoader::rank_batches(int64_t epoch) const {
  const Impl& s = *impl_;
  std::vector<int64_t> order(s.utterances.size());
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 generator(mix64(static_cast<uint64_t>(s.seed)) ^
                            mix64(static_cast<uint64_t>(epoch) + 1));
  // Fisher-Yates with our own draws: std::shuffle's use of the generator is unspecified, and
  // the plan must be the same with every standard library.
  for (size_t i = order.size(); i > 1; --i) {
    std::swap(order[i - 1], order[static_cast<size_t>(generator() % i)]);
  }
  const size_t global = static_cast<size_t>(s.batch_size) * static_cast<size_t>(s.world_size);
  std::vector<std::vector<int64_t>> batches;
  for (size_t first = 0; first + global <= order.size(); first += global) {
    const auto begin = order.begin() + static_cast<std::ptrdiff_t>(
                                           first + static_cast<size_t>(s.rank * s.batch_size));
    batches.emplace_back(begin, begin + s.batch_size);
  }
  return batches;
}

void SegmentLoader::start_epoch(int64_t epoch, int64_t skip) {
  Impl& s = *impl_;
  s.stop();
  s.epoch = epoch;
  s.batches = rank_batches(epoch);
  s.ready.clear();
  s.failure = nullptr;
  s.stopping = false;
  s.next_to_load = static_cast<size_t>(std::clamp<int64_t>(skip, 0, s.batches.size()));
  s.next_to_return = s.next_to_load;
  if (s.background) s.worker = std::thread([&s] { s.work(); });
}

std::optional<SegmentBatch> SegmentLoader::next() {
  Impl& s = *impl_;
  if (s.next_to_return >= s.batches.size()) return std::nullopt;
  if (!s.background) return s.load(s.next_to_return++);
  Stopwatch clock;
  std::unique_lock<std::mutex> lock(s.mutex);
  s.produced.wait(lock, [&] { return !s.ready.empty() || s.failure; });
  s.waited += clock.seconds();
  if (s.ready.empty()) std::rethrow_exception(s.failure);
  SegmentBatch batch = std::move(s.ready.front());
  s.ready.pop_front();
  ++s.next_to_return;
  lock.unlock();
  s.consumed.notify_one();
  return batch;
}

int64_t SegmentLoader::batches_per_epoch() const {
  const Impl& s = *impl_;
  return static_cast<int64_t>(s.utterances.size()) /
         (static_cast<int64_t>(s.batch_size) * s.world_size);
}

double SegmentLoader::wait_seconds() const { return impl_->waited; }

}  // namespace tts::data
