#include "tts/train/family.h"

#include <torch/torch.h>

#include "tts/train/lr_schedule.h"
#include "tts/train/optimizer.h"

namespace tts::train {

OptimizerSlot adam_slot(std::string name, std::vector<torch::Tensor> parameters,
                        const config::TrainOptions& train) {
  OptimizerSlot slot;
  slot.name = std::move(name);
  slot.parameters = std::move(parameters);
  slot.optimizer = make_adam(slot.parameters, adam_settings(train));
  slot.learning_rate = [train](int64_t step, int64_t epoch) {
    return learning_rate_at(train, step, epoch);
  };
  slot.grad_clip = train.grad_clip_thresh;
  return slot;
}

int64_t count_parameters(torch::nn::Module& module) {
  int64_t total = 0;
  for (const auto& p : module.parameters()) total += p.numel();
  return total;
}

}  // namespace tts::train
