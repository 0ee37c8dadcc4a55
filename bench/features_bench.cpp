// Feature-extraction throughput: real-time factor and clips/s on one core, for the NVIDIA and
// Rayhane configurations, over the 6-8 s clips of a directory of 22050 Hz WAVs (see
// docs/benchmarks.md for how the corpus is made). Times the in-memory pipeline
// (AudioProcessor::compute: trim, pre-emphasis, STFT, mel, compression) and, separately, file
// reading; also times the stages on their own: the STFT magnitude through FFTW (the CPU path)
// and, for comparison, through torch::stft (the GPU path), the mel band sums, the compression of
// the mel and of the linear spectrogram (the compress rows include a copy of their input).
//
//   bench_features WAV_DIR [REPEATS]
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "tts/audio/audio_io.h"
#include "tts/audio/audio_processor.h"
#include "tts/config/config.h"

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: bench_features WAV_DIR [REPEATS]\n";
    return 2;
  }
  const std::string dir = argv[1];
  const int repeats = argc > 2 ? std::stoi(argv[2]) : 3;
  torch::set_num_threads(1);

  const std::vector<std::pair<std::string, std::string>> configs = {
      {"nvidia", std::string(TTS_SOURCE_DIR) + "/configs/ljspeech_tacotron2.yaml"},
      {"rayhane", std::string(TTS_SOURCE_DIR) + "/configs/ljspeech_tacotron2_linear.yaml"}};

  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".wav") paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());
  tts::config::AudioOptions read_options;
  std::vector<std::vector<float>> clips;
  double audio_seconds = 0;
  auto read_start = std::chrono::steady_clock::now();
  for (const std::string& path : paths) {
    std::vector<float> samples = tts::audio::read_audio(path, read_options);
    const double duration = static_cast<double>(samples.size()) / read_options.sample_rate;
    if (duration < 6.0 || duration > 8.0) continue;
    audio_seconds += duration;
    clips.push_back(std::move(samples));
  }
  const double read_seconds = seconds_since(read_start);
  if (clips.empty()) {
    std::cerr << "bench_features: no 6-8 s clips in " << dir << "\n";
    return 1;
  }
  std::printf("%zu clips of 6-8 s (%.1f s of audio, mean %.2f s) from %zu files; 1 thread\n",
              clips.size(), audio_seconds, audio_seconds / clips.size(), paths.size());
  std::printf("read_audio (all %zu files): %.1f ms/file\n", paths.size(),
              1e3 * read_seconds / paths.size());
  std::printf("%-8s %-22s %10s %10s %12s\n", "config", "stage", "ms/clip", "clips/s", "RTF");

  for (const auto& [name, path] : configs) {
    tts::config::Config config = tts::config::load_config(path);
    tts::audio::AudioProcessor processor(config.audio);
    auto report = [&](const std::string& stage, double seconds) {
      const double per_clip = seconds / (clips.size() * repeats);
      std::printf("%-8s %-22s %10.2f %10.1f %12.5f\n", name.c_str(), stage.c_str(), 1e3 * per_clip,
                  1.0 / per_clip, seconds / (audio_seconds * repeats));
    };
    for (bool linear : {false, true}) {
      processor.compute(clips.front(), linear);  // warm-up
      auto start = std::chrono::steady_clock::now();
      for (int r = 0; r < repeats; ++r) {
        for (const auto& clip : clips) processor.compute(clip, linear);
      }
      report(linear ? "compute (mel+linear)" : "compute (mel)", seconds_since(start));
    }
    // The stages of compute on their own, each over every clip (the STFT on the untrimmed clip,
    // so slightly more frames than compute sees).
    torch::NoGradGuard no_grad;
    const tts::config::AudioOptions& o = config.audio;
    std::vector<torch::Tensor> signals;
    for (const auto& clip : clips) {
      signals.push_back(
          torch::from_blob(const_cast<float*>(clip.data()), {int64_t(clip.size())}).clone());
    }
    auto timed = [&](const std::string& stage, auto&& body) {
      body(clips.front(), signals.front());  // warm-up
      auto start = std::chrono::steady_clock::now();
      for (int r = 0; r < repeats; ++r) {
        for (size_t i = 0; i < clips.size(); ++i) body(clips[i], signals[i]);
      }
      report(stage, seconds_since(start));
    };
    timed("  STFT |.|^p (FFTW)", [&](const std::vector<float>& clip, const torch::Tensor&) {
      torch::Tensor out = torch::empty(
          {processor.stft().n_frames(int64_t(clip.size())), processor.stft().n_bins()});
      processor.stft().magnitude(clip.data(), int64_t(clip.size()), o.magnitude_power,
                                 out.data_ptr<float>());
    });
    timed("  STFT |.|^p (torch)", [&](const std::vector<float>&, const torch::Tensor& signal) {
      torch::Tensor m = processor.stft().forward(signal).abs();
      if (o.magnitude_power != 1.0) m = m.pow(o.magnitude_power);
      m = m.contiguous();
    });
    std::vector<torch::Tensor> magnitudes;
    for (const auto& signal : signals)
      magnitudes.push_back(processor.stft().magnitude(signal, o.magnitude_power));
    size_t next = 0;
    timed("  mel bands", [&](const std::vector<float>&, const torch::Tensor&) {
      processor.filterbank().apply(magnitudes[next++ % magnitudes.size()]);
    });
    std::vector<torch::Tensor> mels;
    for (const auto& m : magnitudes) mels.push_back(processor.filterbank().apply(m));
    timed("  compress mel", [&](const std::vector<float>&, const torch::Tensor&) {
      torch::Tensor mel = mels[next++ % mels.size()].clone();
      processor.compression().compress_in_place(mel.data_ptr<float>(), mel.numel());
    });
    timed("  compress linear", [&](const std::vector<float>&, const torch::Tensor&) {
      torch::Tensor linear = magnitudes[next++ % magnitudes.size()].clone();
      processor.compression().compress_in_place(linear.data_ptr<float>(), linear.numel());
    });
  }
  return 0;
}
