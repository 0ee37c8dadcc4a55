// Loader throughput (mel frames per second delivered to the training step) on a generated store
// with LJSpeech's length distribution, for several worker counts.
//
//   bench_loader TRANSCRIPTS [UTTERANCES] [--linear]
//   TRANSCRIPTS: LJSpeech-1.1's metadata.csv (ID|raw text|normalized text) or a file of ID|text
//   lines, whose text lengths give the first UTTERANCES (default 1024) utterances' frames.
//   Writes the store under TTS bench's temporary folder (/tmp/tts_loader_bench), then loads two
//   epochs per setting with a training step that takes no time, so the figure is the loader's
//   ceiling.
#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "tts/config/config.h"
#include "tts/core/timer.h"
#include "tts/data/loader.h"
#include "tts/formats/npy.h"

namespace {

std::vector<int64_t> ljspeech_frames(const std::string& path, size_t count) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::vector<int64_t> frames;
  std::string line;
  while (frames.size() < count && std::getline(in, line)) {
    auto bar = line.rfind('|');  // the text is the last field: ID|text or ID|raw|normalized
    if (bar == std::string::npos) continue;
    double characters = static_cast<double>(line.size() - bar - 1);
    frames.push_back(std::max<int64_t>(1, static_cast<int64_t>(characters / 15.0 * 86.0 + 0.5)));
  }
  return frames;
}

std::string make_store(const std::string& dir, const tts::config::Config& config,
                       const std::vector<int64_t>& frames) {
  std::system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "/mels' '" + dir + "/linear'").c_str());
  std::string rows = "id\tn_frames\tn_samples\tmel\tlinear\ttext\n";
  for (size_t i = 0; i < frames.size(); ++i) {
    std::string id = fmt::format("b{:05d}", i);
    std::vector<float> mel(frames[i] * config.audio.n_mels, -4.0f);
    tts::formats::write_npy(dir + "/mels/" + id + ".npy", mel.data(),
                            {frames[i], config.audio.n_mels});
    std::string linear = "-";
    if (config.audio.linear) {
      std::vector<float> lin(frames[i] * config.audio.n_linear(), -4.0f);
      tts::formats::write_npy(dir + "/linear/" + id + ".npy", lin.data(),
                              {frames[i], config.audio.n_linear()});
      linear = "linear/" + id + ".npy";
    }
    rows += fmt::format("{}\t{}\t{}\tmels/{}.npy\t{}\t{}\n", id, frames[i],
                        frames[i] * config.audio.hop_length, id, linear,
                        std::string(static_cast<size_t>(frames[i] * 15 / 86), 'a'));
  }
  std::ofstream(dir + "/metadata.tsv") << rows;
  std::ofstream(dir + "/train.tsv") << rows;
  std::ofstream(dir + "/val.tsv") << "id\tn_frames\tn_samples\tmel\tlinear\ttext\n";
  std::ofstream(dir + "/features.yaml")
      << "tts_train_version: " << TTS_VERSION << "\n"
      << tts::config::dump_sections(config, {"audio", "text"})
      << "\ncounts: {inputs: " << frames.size() << "}\nresampled_files: 0\n";
  return dir;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr,
               "usage: bench_loader TRANSCRIPTS [UTTERANCES] [--linear]\n"
               "  TRANSCRIPTS: LJSpeech-1.1's metadata.csv, or a file of ID|text lines "
               "(tests/data/ljspeech_sample_transcripts.txt holds 300 of them)\n");
    return 2;
  }
  std::string path = argv[1];
  size_t count = argc > 2 ? std::stoul(argv[2]) : 1024;
  bool linear = argc > 3 && std::string(argv[3]) == "--linear";
  tts::config::Config config;
  config.audio.linear = linear;
  std::vector<int64_t> frames = ljspeech_frames(path, count);
  if (frames.empty()) {
    fmt::print(stderr, "bench_loader: no ID|text lines in {}\n", path);
    return 2;
  }
  tts::Stopwatch write_watch;
  std::string dir = make_store("/tmp/tts_loader_bench", config, frames);
  fmt::print("store: {} utterances{} written in {:.1f} s\n", frames.size(),
             linear ? " with linear targets" : "", write_watch.seconds());
  tts::data::FeatureStore store = tts::data::FeatureStore::open(dir, config);
  auto tokenizer = [](const std::string& text) { return std::vector<int64_t>(text.size(), 1); };
  fmt::print("{:>7} {:>6} {:>8} | {:>12} {:>10} {:>10}\n", "workers", "batch", "prefetch",
             "frames/s", "batches/s", "wait s");
  for (int batch_size : {4, 32}) {
    for (int workers : {0, 1, 2, 4}) {
      config.train.batch_size = batch_size;
      config.data.num_workers = workers;
      config.data.prefetch_batches = 4;
      tts::data::Loader loader(store, store.train(), config,
                               {config.model.n_frames_per_step, config.train.batch_size}, tokenizer,
                               0, 1);
      loader.start_epoch(0);  // warm the page cache
      while (loader.next()) {
      }
      int64_t frames_loaded = 0, batches = 0;
      tts::Stopwatch watch;
      for (int64_t epoch = 1; epoch <= 2; ++epoch) {
        loader.start_epoch(epoch);
        while (auto batch = loader.next()) {
          frames_loaded += batch->real_frames();
          ++batches;
        }
      }
      double seconds = watch.seconds();
      fmt::print("{:>7} {:>6} {:>8} | {:>12.0f} {:>10.1f} {:>10.2f}\n", workers, batch_size, 4,
                 frames_loaded / seconds, batches / seconds, loader.wait_seconds());
    }
  }
  return 0;
}
