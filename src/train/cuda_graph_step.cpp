#include "tts/train/cuda_graph_step.h"

#include <fmt/format.h>

#include "cuda_graph_step_cuda.h"
#include "tts/core/error.h"

namespace tts::train {

void check_graphed_step(Family& family, const config::TrainOptions& train,
                        const torch::Device& device) {
  auto refuse = [](const std::string& why) {
    throw UsageError(
        fmt::format("train.cuda_graphs: true {}; or set train.cuda_graphs: false "
                    "(eager, the default)",
                    why));
  };
  if (train.length_buckets <= 0) {
    refuse(
        "replays one graph per batch shape, but train.length_buckets is 0 (every batch its own "
        "shape): set train.length_buckets (e.g. 8)");
  }
  if (train.accumulate != 1) {
    refuse(fmt::format(
        "captures one micro-batch per step, but train.accumulate is {}: set train.accumulate: 1",
        train.accumulate));
  }
  const std::string blocker = family.replay_blocker();
  if (!blocker.empty()) {
    refuse(fmt::format(
        "needs a training step that a replay repeats exactly (Note [Replaying a training step], "
        "include/tts/train/cuda_graph_step.h), and this model's does not yet: {}",
        blocker));
  }
  if (!device.is_cuda()) {
    refuse(fmt::format(
        "needs a CUDA device, but this run trains on {}: run it on a GPU (train.device: cuda)",
        device.str()));
  }
#ifndef TTS_WITH_CUDA
  refuse(
      "needs a build with CUDA, and this one has none: build against a CUDA libtorch "
      "(scripts/build.sh --torch pip)");
#endif
}

std::unique_ptr<GraphedStep> make_graphed_step(Step& step, Family& family,
                                               const config::TrainOptions& train,
                                               const torch::Device& device) {
  check_graphed_step(family, train, device);
#ifdef TTS_WITH_CUDA
  return make_cuda_graphed_step(step, device);
#else
  (void)step;
  return nullptr;  // unreachable: check_graphed_step refused
#endif
}

}  // namespace tts::train
