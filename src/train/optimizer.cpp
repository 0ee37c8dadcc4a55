#include "tts/train/optimizer.h"

namespace tts::train {

AdamSettings adam_settings(const config::TrainOptions& train) {
  AdamSettings settings;
  settings.learning_rate = train.learning_rate;
  settings.beta1 = train.adam_beta1;
  settings.beta2 = train.adam_beta2;
  settings.eps = train.adam_eps;
  settings.weight_decay = train.weight_decay;
  return settings;
}

std::unique_ptr<torch::optim::Adam> make_adam(const std::vector<torch::Tensor>& parameters,
                                              const AdamSettings& settings) {
  return std::make_unique<torch::optim::Adam>(parameters,
                                              torch::optim::AdamOptions(settings.learning_rate)
                                                  .betas({settings.beta1, settings.beta2})
                                                  .eps(settings.eps)
                                                  .weight_decay(settings.weight_decay));
}

}  // namespace tts::train
