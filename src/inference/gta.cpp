#include "tts/inference/gta.h"

#include <torch/torch.h>

#include <algorithm>
#include <filesystem>

#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/core/logging.h"
#include "tts/data/batch.h"
#include "tts/data/feature_store.h"
#include "tts/data/ljspeech.h"
#include "tts/dist/communicator.h"
#include "tts/dist/rank_info.h"
#include "tts/formats/npy.h"
#include "tts/inference/trained_model.h"
#include "tts/model/tacotron2.h"
#include "tts/text/text_processor.h"

namespace tts::inference {
namespace fs = std::filesystem;
namespace {

// Whether out/ID.npy is already a complete [n_mels, frames] float32 array.
bool already_done(const std::string& path, int64_t n_mels, int64_t frames) {
  if (!fs::exists(path)) return false;
  try {
    formats::NpyHeader header = formats::read_npy_header(path);
    return header.dtype == "<f4" && header.shape == std::vector<int64_t>{n_mels, frames} &&
           fs::file_size(path) == header.data_offset + static_cast<size_t>(n_mels * frames * 4);
  } catch (const Error&) {
    return false;
  }
}

}  // namespace

GtaSummary run_gta(const GtaRequest& request) {
  auto log = log::get("gta");
  dist::RankInfo rank;
  rank.rank = request.rank;
  rank.world_size = request.world_size;
  rank.local_rank = request.local_rank;
  rank.local_world_size = request.local_world_size;
  // Placed as a training rank of gloo is (dist::resolve_placement): ranks share GPUs round robin.
  TrainedModel trained = load_trained_model(request.checkpoint, torch::kCPU);
  const config::Config& config = trained.config;
  const data::Phase phase = trained.phase;  // in force when written
  const torch::Device device =
      dist::resolve_placement(rank, config.train.device, config::Backend::kGloo).device;
  trained.model->to(device);
  model::Tacotron2& model = trained.model;
  data::FeatureStore store = data::FeatureStore::open(request.data_dir, config);
  if (config.audio.trim && request.rank == 0) {
    log->warn(
        "audio.trim is true: the store's mels start after the trimmed silence, so they do "
        "not align with the WAVs in the filelist; make the store with audio.trim: false for "
        "vocoder fine-tuning");
  }
  text::TextProcessor text(config.text);

  std::vector<data::Utterance> all = store.train();
  all.insert(all.end(), store.val().begin(), store.val().end());
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  fs::create_directories(request.out_dir);
  auto mel_path = [&](const std::string& id) {
    return (fs::path(request.out_dir) / (id + ".npy")).string();
  };
  if (request.rank == 0) {
    std::string filelist;
    for (const auto& u : all) {
      filelist += data::ljspeech_wav_path(request.wavs_dir, u.id) + "|" + mel_path(u.id) + "\n";
    }
    write_file_atomic((fs::path(request.out_dir) / "filelist.txt").string(), filelist);
  }

  GtaSummary summary;
  std::vector<data::Example> todo;
  for (size_t i = static_cast<size_t>(request.rank); i < all.size();
       i += static_cast<size_t>(request.world_size)) {
    const data::Utterance& u = all[i];
    if (already_done(mel_path(u.id), config.audio.n_mels, u.n_frames)) {
      ++summary.reused;
      continue;
    }
    formats::NpyArray mel = formats::read_npy(u.mel_path);
    todo.push_back({u.id,
                    text.to_ids(u.text),
                    torch::from_blob(mel.data.data(), mel.shape, torch::kFloat32).clone(),
                    {}});
  }
  // Longest text first, as the batches NVIDIA's collate makes (its convolutions see the padding).
  std::stable_sort(todo.begin(), todo.end(),
                   [](const auto& a, const auto& b) { return a.text.size() > b.text.size(); });
  torch::NoGradGuard no_grad;
  const size_t batch_size = static_cast<size_t>(std::max(phase.batch_size, 1));
  for (size_t start = 0; start < todo.size(); start += batch_size) {
    std::vector<data::Example> examples(
        todo.begin() + static_cast<std::ptrdiff_t>(start),
        todo.begin() + static_cast<std::ptrdiff_t>(std::min(todo.size(), start + batch_size)));
    data::Batch batch = data::collate(std::move(examples), phase.r).to(device);
    model::TacotronOutput out =
        model->forward(batch.text, batch.text_lengths, batch.mel, batch.mel_lengths);
    torch::Tensor mels = out.mel_postnet.to(torch::kCPU);
    for (int64_t b = 0; b < batch.size(); ++b) {
      int64_t frames = batch.mel_lengths[b].item<int64_t>();
      torch::Tensor mel = mels[b].narrow(0, 0, frames).t().contiguous();  // [n_mels, frames]
      formats::write_npy(mel_path(batch.ids[static_cast<size_t>(b)]), mel.data_ptr<float>(),
                         mel.sizes().vec());
      ++summary.written;
    }
  }
  log->info("rank {}: {} ground-truth-aligned mels written to {}, {} already there", request.rank,
            summary.written, request.out_dir, summary.reused);
  return summary;
}

}  // namespace tts::inference
