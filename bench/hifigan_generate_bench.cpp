// HiFi-GAN generation speed on one CPU thread: the generator of a config (configs/hifigan_v1.yaml,
// _v2, _v3: jik876's V1-V3) with its initial weights, in eval mode without gradients as
// `tts-train vocode` and `synthesize --vocoder` run it (with tts-train's heap policy,
// tts/core/allocator.h), on a random mel. Prints samples a second
// and the real-time factor (seconds of compute per second of audio at the config's sample rate).
// bench/hifigan_jik876_generate.py times jik876's own inference (inference.py: remove_weight_norm,
// then the generator under no_grad) at the same sizes.
//
//   bench_hifigan_generate CONFIG [FRAMES] [REPEATS] [THREADS]
//   FRAMES: mel frames (default 200: 51,200 samples at hop 256, 2.3 s); REPEATS: timed runs after
//   one warm-up, the best is reported (default 3); THREADS: intra-op threads (default 1).
#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <string>

#include "tts/config/config.h"
#include "tts/core/allocator.h"
#include "tts/models/hifigan/layers/generator.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "usage: bench_hifigan_generate CONFIG [FRAMES] [REPEATS] [THREADS]\n");
    return 2;
  }
  tts::keep_freed_memory();  // as tts-train's vocode and synthesize run
  const tts::config::Config config = tts::config::load_config(argv[1]);
  const int64_t frames = argc > 2 ? std::stoll(argv[2]) : 200;
  const int repeats = argc > 3 ? std::stoi(argv[3]) : 3;
  torch::set_num_threads(argc > 4 ? std::stoi(argv[4]) : 1);
  torch::manual_seed(0);
  tts::hifigan::Generator generator(config.hifigan, config.audio.n_mels);
  generator->eval();
  torch::NoGradGuard no_grad;
  const torch::Tensor mel = torch::randn({1, config.audio.n_mels, frames});
  double best = 1e30;
  int64_t samples = 0;
  for (int run = 0; run <= repeats; ++run) {
    const auto start = std::chrono::steady_clock::now();
    samples = generator->forward(mel).numel();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (run > 0) best = std::min(best, seconds);  // run 0 warms up
  }
  const double rate = static_cast<double>(samples) / best;
  fmt::print(
      "ours: {} samples, {} thread(s), best of {}: {:.3f} s, {:.0f} samples/s, real-time factor "
      "{:.3f}\n",
      samples, torch::get_num_threads(), repeats, best, rate,
      static_cast<double>(config.audio.sample_rate) / rate);
  return 0;
}
