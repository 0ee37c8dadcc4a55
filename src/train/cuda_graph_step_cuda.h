// The CUDA side of train.cuda_graphs (cuda_graph_step_cuda.cpp, built only with CUDA).
#pragma once

#include <torch/types.h>

#include <memory>

#include "tts/train/cuda_graph_step.h"

namespace tts::train {

#ifdef TTS_WITH_CUDA
// The graphed step of `step` on `device` (checked by check_graphed_step).
std::unique_ptr<GraphedStep> make_cuda_graphed_step(Step& step, const torch::Device& device);
#endif

}  // namespace tts::train
