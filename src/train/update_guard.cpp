#include "update_guard.h"

namespace tts::train {
namespace {

// Calls `visit(state)` with `state` as Adam's or AdamW's parameter state; other kinds are skipped.
template <class Visit>
void visit_adam_state(torch::optim::OptimizerParamState& state, Visit&& visit) {
  if (auto* adam = dynamic_cast<torch::optim::AdamParamState*>(&state)) {
    visit(*adam);
  } else if (auto* adamw = dynamic_cast<torch::optim::AdamWParamState*>(&state)) {
    visit(*adamw);
  }
}

// Copies `from` into `into`, allocating `into` only when its shape or kind differs.
void copy_into(torch::Tensor& into, const torch::Tensor& from) {
  if (!from.defined()) {
    into = torch::Tensor();
    return;
  }
  if (!into.defined() || into.sizes() != from.sizes() || into.dtype() != from.dtype() ||
      into.device() != from.device()) {
    into = torch::empty_like(from);
  }
  into.copy_(from);
}

std::vector<torch::Tensor> parameters_of(torch::optim::Optimizer& optimizer) {
  std::vector<torch::Tensor> out;
  for (auto& group : optimizer.param_groups()) {
    for (const torch::Tensor& p : group.params()) out.push_back(p);
  }
  return out;
}

}  // namespace

void UpdateGuard::save(torch::optim::Optimizer& optimizer) {
  torch::NoGradGuard no_grad;
  const std::vector<torch::Tensor> parameters = parameters_of(optimizer);
  parameters_.resize(parameters.size());
  for (size_t i = 0; i < parameters.size(); ++i) copy_into(parameters_[i], parameters[i]);
  saved_moments_ = 0;
  for (auto& [key, state] : optimizer.state()) {
    visit_adam_state(*state, [&](auto& adam) {
      if (saved_moments_ == moments_.size()) moments_.emplace_back();
      Moments& m = moments_[saved_moments_++];
      m.key = key;
      m.step = adam.step();
      copy_into(m.exp_avg, adam.exp_avg());
      copy_into(m.exp_avg_sq, adam.exp_avg_sq());
      copy_into(m.max_exp_avg_sq, adam.max_exp_avg_sq());
    });
  }
}

bool UpdateGuard::finite(torch::optim::Optimizer& optimizer) const {
  torch::NoGradGuard no_grad;
  const std::vector<torch::Tensor> parameters = parameters_of(optimizer);
  // One flag on the device, read once: no synchronization per tensor.
  torch::Tensor all_finite;
  auto add = [&](const torch::Tensor& t) {
    if (!t.defined() || t.numel() == 0 || !t.is_floating_point()) return;
    torch::Tensor ok = torch::isfinite(t).all();
    all_finite = all_finite.defined() ? all_finite.logical_and(ok) : ok;
  };
  for (const torch::Tensor& p : parameters) add(p);
  for (auto& [key, state] : optimizer.state()) {
    visit_adam_state(*state, [&](auto& adam) {
      add(adam.exp_avg());
      add(adam.exp_avg_sq());
      add(adam.max_exp_avg_sq());
    });
  }
  return !all_finite.defined() || all_finite.item<bool>();
}

void UpdateGuard::restore(torch::optim::Optimizer& optimizer) {
  torch::NoGradGuard no_grad;
  const std::vector<torch::Tensor> parameters = parameters_of(optimizer);
  for (size_t i = 0; i < parameters.size(); ++i) parameters[i].copy_(parameters_.at(i));
  auto& states = optimizer.state();
  std::vector<StateKey> created;
  for (auto& [key, state] : states) {
    const Moments* saved = nullptr;
    for (size_t i = 0; i < saved_moments_ && saved == nullptr; ++i) {
      if (moments_[i].key == key) saved = &moments_[i];
    }
    if (saved == nullptr) {
      created.push_back(key);
      continue;
    }
    visit_adam_state(*state, [&](auto& adam) {
      adam.step(saved->step);
      adam.exp_avg().copy_(saved->exp_avg);
      adam.exp_avg_sq().copy_(saved->exp_avg_sq);
      if (saved->max_exp_avg_sq.defined()) adam.max_exp_avg_sq().copy_(saved->max_exp_avg_sq);
    });
  }
  for (const StateKey& key : created) states.erase(key);
}

}  // namespace tts::train
