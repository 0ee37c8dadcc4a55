// The optimizer of training: torch::optim::Adam or AdamW (checkpoints hold the state of either,
// checkpoint.h). Built in one place, so that `tts-train bench` times the update that training runs.
#pragma once

#include <torch/optim/optimizer.h>
#include <torch/types.h>

#include <memory>
#include <vector>

#include "tts/config/train_options.h"

namespace tts::train {

// Adam's hyperparameters. The defaults live in config section `train` (adam_settings reads them),
// not here.
struct AdamSettings {
  config::Optimizer kind = config::Optimizer::kAdam;
  double learning_rate = 0;  // training's LR schedule then sets it before every step
  double beta1 = 0;
  double beta2 = 0;
  double eps = 0;
  double weight_decay = 0;  // Adam: L2 added to the gradient; AdamW: decoupled
};

// train.optimizer, learning_rate, adam_beta1, adam_beta2, adam_eps and weight_decay.
AdamSettings adam_settings(const config::TrainOptions& train);

// Adam or AdamW (settings.kind) over `parameters` in one group, without amsgrad.
std::unique_ptr<torch::optim::Optimizer> make_adam(const std::vector<torch::Tensor>& parameters,
                                                   const AdamSettings& settings);

}  // namespace tts::train
