#include "tts/models/tacotron2/gta.h"

#include <torch/torch.h>

#include <algorithm>
#include <filesystem>

#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/core/logging.h"
#include "tts/data/batch.h"
#include "tts/data/feature_store.h"
#include "tts/data/ljspeech.h"
#include "tts/data/store_writer.h"
#include "tts/dist/communicator.h"
#include "tts/dist/rank_info.h"
#include "tts/formats/npy.h"
#include "tts/models/tacotron2/network.h"
#include "tts/models/tacotron2/trained_model.h"
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
                      data::StoreWriter::waveform_path(u.id), u.text});
    }
    return rows;
  };
  data::Split split{rows_of(source.train()), rows_of(source.val())};
  std::vector<data::StoreRow> all = split.train;
  all.insert(all.end(), split.val.begin(), split.val.end());
  data::StoreWriter writer(out, false, true);
  writer.write_metadata(all, split);
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

}  // namespace

models::GtaSummary run_gta(const models::TrainedCheckpoint& read,
                           const models::GtaRequest& request) {
  auto log = log::get("gta");
  dist::RankInfo rank;
  rank.rank = request.rank;
  rank.world_size = request.world_size;
  rank.local_rank = request.local_rank;
  rank.local_world_size = request.local_world_size;
  // Placed as a training rank of gloo is (dist::resolve_placement): ranks share GPUs round robin.
  TrainedModel trained = trained_model(read, torch::kCPU);
  const config::Config& config = trained.config;
  const data::Phase phase = trained.phase;  // in force when written
  const torch::Device device =
      dist::resolve_placement(rank, config.train.device, config::Backend::kGloo).device;
  trained.model->to(device);
  tacotron2::Tacotron2& model = trained.model;
  data::FeatureStore store = data::FeatureStore::open(request.data_dir, config);
  if (config.audio.trim && request.rank == 0) {
    log->warn(
        "audio.trim is true: the store's mels start after the trimmed silence, so they do "
        "not align with the WAVs in filelist.txt (the WAVs of other frameworks' fine-tuning); "
        "a store that keeps waveforms (audio.waveforms: true) pairs each mel with its trimmed "
        "audio");
  }
  text::TextProcessor text(config.text);

  std::vector<data::Utterance> all = store.train();
  all.insert(all.end(), store.val().begin(), store.val().end());
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  // With the source's waveforms, OUT is also a feature store a vocoder trains on.
  const bool as_store = !all.empty() && !all.front().waveform_path.empty();
  std::unique_ptr<data::StoreWriter> folders;
  if (as_store) {
    folders = std::make_unique<data::StoreWriter>(request.out_dir, false, true);
  } else {
    create_folder(request.out_dir);
    if (request.rank == 0) {
      log->info(
          "{} keeps no waveforms (audio.waveforms: false): {} holds the mels and filelist.txt, "
          "not a store a vocoder of tts-train trains on",
          request.data_dir, request.out_dir);
    }
  }
  auto mel_path = [&](const std::string& id) {
    return (fs::path(request.out_dir) / (id + ".npy")).string();
  };
  auto store_path = [&](const std::string& relative) {
    return (fs::path(request.out_dir) / relative).string();
  };
  if (request.rank == 0) {
    std::string filelist;
    for (const auto& u : all) {
      filelist +=
          data::find_ljspeech_audio(request.wavs_dir, u.id).path + "|" + mel_path(u.id) + "\n";
    }
    write_file_atomic((fs::path(request.out_dir) / "filelist.txt").string(), filelist);
  }

  models::GtaSummary summary;
  std::vector<data::Example> todo;
  for (size_t i = static_cast<size_t>(request.rank); i < all.size();
       i += static_cast<size_t>(request.world_size)) {
    const data::Utterance& u = all[i];
    if (already_done(mel_path(u.id), {config.audio.n_mels, u.n_frames}) &&
        (!as_store ||
         (already_done(store_path(data::StoreWriter::mel_path(u.id)),
                       {u.n_frames, config.audio.n_mels}) &&
          already_done(store_path(data::StoreWriter::waveform_path(u.id)), {u.n_samples})))) {
      ++summary.reused;
      continue;
    }
    if (as_store) {
      formats::NpyArray wave = formats::read_npy(u.waveform_path);
      TTS_CHECK(wave.shape == std::vector<int64_t>{u.n_samples},
                "{} (utterance {}): a waveform of shape [{}], the store's tables promise [{}]; "
                "run `tts-train data check {}`",
                u.waveform_path, u.id, fmt::join(wave.shape, ", "), u.n_samples, request.data_dir);
      formats::write_npy(store_path(data::StoreWriter::waveform_path(u.id)), wave);
    }
    if (auto problem =
            data::check_feature_file(u.mel_path, u.id, config.audio.n_mels, u.n_frames)) {
      throw Error(fmt::format("{}; run `tts-train data check {}` and re-run tts-train preprocess",
                              *problem, request.data_dir));
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
    tacotron2::TacotronOutput out =
        model->forward(batch.text, batch.text_lengths, batch.mel, batch.mel_lengths);
    torch::Tensor mels = out.mel_postnet.to(torch::kCPU);
    for (int64_t b = 0; b < batch.size(); ++b) {
      int64_t frames = batch.mel_lengths[b].item<int64_t>();
      const std::string& id = batch.ids[static_cast<size_t>(b)];
      torch::Tensor ours = mels[b].narrow(0, 0, frames).contiguous();  // [frames, n_mels]
      if (as_store) {
        formats::write_npy(store_path(data::StoreWriter::mel_path(id)), ours.data_ptr<float>(),
                           ours.sizes().vec());
      }
      torch::Tensor mel = ours.t().contiguous();  // [n_mels, frames], NVIDIA's and jik876's
      formats::write_npy(mel_path(id), mel.data_ptr<float>(), mel.sizes().vec());
      ++summary.written;
    }
  }
  log->info("rank {}: {} ground-truth-aligned mels written to {}, {} already there", request.rank,
            summary.written, request.out_dir, summary.reused);
  text.report();  // the characters the symbol set dropped, counted
  // The rank that finds every utterance's files complete writes the tables (with several ranks,
  // the last to finish; two that finish together write the same files, atomically). A rank that
  // failed leaves the store without tables: running gta again completes it.
  if (as_store) {
    const bool complete = std::all_of(all.begin(), all.end(), [&](const data::Utterance& u) {
      return already_done(store_path(data::StoreWriter::mel_path(u.id)),
                          {u.n_frames, config.audio.n_mels}) &&
             already_done(store_path(data::StoreWriter::waveform_path(u.id)), {u.n_samples});
    });
    if (complete) {
      write_store_tables(request.out_dir, store, config);
      log->info(
          "{} is a feature store of the predicted mels and their waveforms: fine-tune a "
          "vocoder on it with tts-train train --data {}",
          request.out_dir, request.out_dir);
    }
  }
  return summary;
}

}  // namespace tts::tacotron2
