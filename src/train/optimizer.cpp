#include "tts/train/optimizer.h"

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>

namespace tts::train {

AdamSettings adam_settings(const config::TrainOptions& train) {
  AdamSettings settings;
  settings.kind = train.optimizer;
  settings.learning_rate = train.learning_rate;
  settings.beta1 = train.adam_beta1;
  settings.beta2 = train.adam_beta2;
  settings.eps = train.adam_eps;
  settings.weight_decay = train.weight_decay;
  return settings;
}

std::unique_ptr<torch::optim::Optimizer> make_adam(const std::vector<torch::Tensor>& parameters,
                                                   const AdamSettings& settings) {
  switch (settings.kind) {
    case config::Optimizer::kAdam:
      return std::make_unique<torch::optim::Adam>(parameters,
                                                  torch::optim::AdamOptions(settings.learning_rate)
                                                      .betas({settings.beta1, settings.beta2})
                                                      .eps(settings.eps)
                                                      .weight_decay(settings.weight_decay));
    case config::Optimizer::kAdamW:
      return std::make_unique<torch::optim::AdamW>(
          parameters, torch::optim::AdamWOptions(settings.learning_rate)
                          .betas({settings.beta1, settings.beta2})
                          .eps(settings.eps)
                          .weight_decay(settings.weight_decay));
  }
  throw std::logic_error("make_adam: unknown optimizer");
}

}  // namespace tts::train
