// Note [Non-finite updates]: an update with a finite gradient can still make a weight non-finite
// (a learning rate or a moment at the edge of float's range: a second moment that overflows to
// infinity, a step of 1e38). Such an update is undone and counted as a skipped step, like a
// non-finite gradient, so that no NaN reaches the next step or a checkpoint; every rank holds the
// same weights, moments and reduced gradients, so every rank takes the same decision.
#pragma once

#include <torch/torch.h>

#include <type_traits>
#include <utility>
#include <vector>

namespace tts::train {

// The parameters of one optimizer and its Adam/AdamW moments, copied before an update so that a
// non-finite outcome can be undone. Its buffers are kept between steps (no allocation per step).
class UpdateGuard {
 public:
  // Copies `optimizer`'s parameters and its per-parameter state (torch::optim::Adam or AdamW; any
  // other optimizer's state is left alone, its parameters still copied).
  void save(torch::optim::Optimizer& optimizer);
  // Whether every parameter of `optimizer` and every moment is finite now.
  bool finite(torch::optim::Optimizer& optimizer) const;
  // Puts back what save() copied; states created by the update are removed.
  void restore(torch::optim::Optimizer& optimizer);

 private:
  // What optimizer.state() is keyed by (a string in libtorch 1.13, a pointer in 2.x).
  using StateKey =
      std::decay_t<decltype(std::declval<torch::optim::Optimizer&>().state())>::key_type;
  struct Moments {
    StateKey key{};
    int64_t step = 0;
    torch::Tensor exp_avg, exp_avg_sq, max_exp_avg_sq;
  };
  std::vector<torch::Tensor> parameters_;
  std::vector<Moments> moments_;  // one per parameter with state before the update
  size_t saved_moments_ = 0;
};

}  // namespace tts::train
