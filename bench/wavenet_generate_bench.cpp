// Incremental WaveNet generation speed on one CPU thread: samples a second and the real-time
// factor (seconds of compute per second of 22050 Hz audio) at r9y9/wavenet_vocoder's default
// network (24 layers in 4 stacks, 128/256/128 channels, a Logistic mixture of 10, 80 mels,
// upsample scales [4, 4, 4, 4], cin_pad 2) with random weights. bench/wavenet_r9y9_generate.py
// times r9y9's own incremental_forward at the same sizes.
//
//   bench_wavenet_generate [FRAMES] [BATCH] [REPEATS]
//   FRAMES: mel frames per utterance (default 40 = 10240 samples); BATCH: utterances generated
//   together (default 1); REPEATS: timed runs, the best is reported (default 3).
#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <string>

#include "tts/models/wavenet/layers/network.h"
#include "tts/models/wavenet/speaking/generate.h"

int main(int argc, char** argv) {
  const int64_t frames = argc > 1 ? std::stoll(argv[1]) : 40;
  const int64_t batch = argc > 2 ? std::stoll(argv[2]) : 1;
  const int repeats = argc > 3 ? std::stoi(argv[3]) : 3;
  constexpr double kSampleRate = 22050;
  torch::set_num_threads(1);
  torch::manual_seed(0);
  tts::config::WavenetOptions options;  // r9y9's defaults
  options.validate();
  tts::wavenet::WaveNet model(options, 80);
  model->eval();
  torch::Tensor mel = torch::randn({batch, 80, frames + 2 * options.cin_pad});
  double best = 1e30;
  int64_t samples = 0;
  for (int run = 0; run < repeats; ++run) {
    auto start = std::chrono::steady_clock::now();
    torch::Tensor audio = tts::wavenet::generate(model, mel, static_cast<uint64_t>(run));
    best = std::min(
        best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    samples = audio.numel();
  }
  const double rate = static_cast<double>(samples) / best;
  fmt::print(
      "ours: batch {} x {} samples, best of {}: {:.3f} s, {:.0f} samples/s, real-time factor "
      "{:.2f}\n",
      batch, samples / batch, repeats, best, rate, kSampleRate / rate);
  return 0;
}
