#include "tts/train/device_adam.h"

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/torch.h>

#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "tts/core/error.h"
#include "tts/core/host_read.h"

namespace tts::train {
namespace {

// What optimizer.state() is keyed by: a string in libtorch 1.13, the TensorImpl pointer in 2.x.
using StateMap = std::decay_t<decltype(std::declval<torch::optim::Optimizer&>().state())>;
using StateKey = StateMap::key_type;

template <class Key>
Key key_of(const torch::Tensor& p) {
  if constexpr (std::is_same_v<Key, std::string>) {
    // As libtorch 1.13 makes it (c10::guts::to_string of the pointer, which 2.x no longer has).
    std::ostringstream key;
    key << static_cast<const void*>(p.unsafeGetTensorImpl());
    return key.str();
  } else {
    return p.unsafeGetTensorImpl();
  }
}

// The options of one group, whichever of Adam and AdamW.
struct Options {
  double beta1 = 0, beta2 = 0, eps = 0, weight_decay = 0;
  bool amsgrad = false;
};

template <class O>
Options options_of(const O& o) {
  return Options{std::get<0>(o.betas()), std::get<1>(o.betas()), o.eps(), o.weight_decay(),
                 o.amsgrad()};
}

// The moments of one parameter's state, whichever of Adam and AdamW.
struct Moments {
  torch::optim::OptimizerParamState* state = nullptr;
  torch::Tensor exp_avg, exp_avg_sq, max_exp_avg_sq;
};

template <class S>
Moments moments_of(S& s) {
  return Moments{&s, s.exp_avg(), s.exp_avg_sq(), s.max_exp_avg_sq()};
}

// Sets the step count of an Adam or AdamW state; false for another kind.
bool set_step(torch::optim::OptimizerParamState& state, int64_t step) {
  if (auto* adam = dynamic_cast<torch::optim::AdamParamState*>(&state)) {
    adam->step(step);
    return true;
  }
  if (auto* adamw = dynamic_cast<torch::optim::AdamWParamState*>(&state)) {
    adamw->step(step);
    return true;
  }
  return false;
}

int64_t step_of(torch::optim::OptimizerParamState& state) {
  if (auto* adam = dynamic_cast<torch::optim::AdamParamState*>(&state)) return adam->step();
  if (auto* adamw = dynamic_cast<torch::optim::AdamWParamState*>(&state)) return adamw->step();
  return 0;
}

}  // namespace

torch::Tensor clip_grad_norm(const std::vector<torch::Tensor>& parameters, double max_norm) {
  // torch::nn::utils::clip_grad_norm_ (norm type 2, no finiteness check) without its final
  // .item(): the same operations in the same order.
  std::vector<torch::Tensor> params_with_grad;
  for (const auto& param : parameters) {
    if (param.grad().defined()) params_with_grad.push_back(param);
  }
  if (params_with_grad.empty()) return torch::zeros({});
  const double norm_type = 2.0;
  std::vector<torch::Tensor> norms;
  norms.reserve(params_with_grad.size());
  for (const auto& param : params_with_grad) {
    norms.emplace_back(param.grad().data().norm(norm_type));
  }
  torch::Tensor total_norm_tensor =
      (norms.size() == 1) ? norms[0] : torch::stack(norms).norm(norm_type);
  auto clip_coef = max_norm / (total_norm_tensor + 1e-6);
  auto clip_coef_clamped = torch::clamp(clip_coef, {} /* min */, 1.0 /* max */);
  for (auto& param : params_with_grad) param.grad().data().mul_(clip_coef_clamped);
  return total_norm_tensor;
}

DeviceAdam::DeviceAdam(torch::optim::Optimizer& optimizer) : optimizer_(optimizer) {
  TTS_CHECK(!optimizer.param_groups().empty(), "DeviceAdam: the optimizer has no parameters");
  const auto& first = optimizer.param_groups().front().options();
  adamw_ = dynamic_cast<const torch::optim::AdamWOptions*>(&first) != nullptr;
  TTS_CHECK(adamw_ || dynamic_cast<const torch::optim::AdamOptions*>(&first) != nullptr,
            "DeviceAdam: the optimizer is neither torch::optim::Adam nor AdamW");
}

torch::Tensor DeviceAdam::step(double lr, const torch::Tensor& allowed,
                               const torch::Tensor& taking_part) {
  TTS_CHECK(
      !optimizer_.param_groups().empty() && !optimizer_.param_groups().front().params().empty(),
      "DeviceAdam: the optimizer has no parameters");
  const torch::Device device = optimizer_.param_groups().front().params().front().device();
  return step(
      torch::scalar_tensor(lr, torch::TensorOptions().dtype(torch::kFloat64).device(device)),
      allowed, taking_part);
}

torch::Tensor DeviceAdam::step(const torch::Tensor& lr, const torch::Tensor& allowed,
                               const torch::Tensor& taking_part_on_device) {
  torch::NoGradGuard no_grad;
  // The parameters and each one's group options, in the optimizer's order.
  std::vector<torch::Tensor> parameters;
  std::vector<Options> options;
  for (auto& group : optimizer_.param_groups()) {
    Options o;
    if (adamw_) {
      o = options_of(static_cast<torch::optim::AdamWOptions&>(group.options()));
    } else {
      o = options_of(static_cast<torch::optim::AdamOptions&>(group.options()));
    }
    for (const torch::Tensor& p : group.params()) {
      parameters.push_back(p);
      options.push_back(o);
    }
  }
  const int64_t n = static_cast<int64_t>(parameters.size());
  TTS_CHECK(n > 0, "DeviceAdam: the optimizer has no parameters");
  const double beta1 = options.front().beta1, beta2 = options.front().beta2;
  for (const Options& o : options) {
    TTS_CHECK(o.beta1 == beta1 && o.beta2 == beta2,
              "DeviceAdam: the optimizer's groups have different betas");
  }
  auto& states = optimizer_.state();
  const torch::Device device = parameters.front().device();
  const auto counts = torch::TensorOptions().dtype(torch::kFloat64).device(device);
  if (!steps_.defined()) {
    // The step counts the host states hold now (a checkpoint's, or none): filled in place, no
    // copy from host memory.
    parameters_ = parameters;
    steps_buffer_ = torch::zeros({n, 2}, counts);
    next_buffer_ = torch::zeros({n, 2}, counts);
    steps_ = steps_buffer_.select(1, 0);
    next_steps_ = next_buffer_.select(1, 0);
    for (int64_t i = 0; i < n; ++i) {
      auto it = states.find(key_of<StateKey>(parameters[i]));
      if (it == states.end()) continue;
      const int64_t step = step_of(*it->second);
      if (step != 0) steps_[i].fill_(static_cast<double>(step));
    }
  }
  TTS_CHECK(static_cast<int64_t>(parameters_.size()) == n,
            "DeviceAdam: the optimizer's parameters changed after its first step");
  std::vector<bool> taking_part(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) taking_part[i] = parameters[i].grad().defined();
  if (taking_part != taking_part_host_) {
    taking_part_host_ = taking_part;
    taking_part_ = torch::zeros({n}, counts);
    for (int64_t i = 0; i < n; ++i) {
      if (taking_part[i]) taking_part_[i].fill_(1.0);
    }
  }
  // Per parameter, as libtorch's host doubles: bias corrections 1 - beta^step and the step size
  // -lr / bias_correction1.
  torch::Tensor part;  // bool [n], where taking_part_on_device is given
  if (taking_part_on_device.defined()) {
    torch::add_out(next_steps_, steps_, taking_part_ * taking_part_on_device);
    part = taking_part_on_device > 0;
  } else {
    torch::add_out(next_steps_, steps_, taking_part_);
  }
  const torch::Tensor bias_correction1 = 1 - torch::pow(beta1, next_steps_);
  const torch::Tensor bias_correction2 = 1 - torch::pow(beta2, next_steps_);
  const torch::Tensor sqrt_bias_correction2 = bias_correction2.sqrt();
  const torch::Tensor neg_step_size = torch::div(lr.neg(), bias_correction1);
  // Cast once per parameter type, as a double Scalar is cast where it meets a float tensor.
  std::vector<std::pair<torch::ScalarType, std::pair<torch::Tensor, torch::Tensor>>> cast;
  auto scalars_for = [&](torch::ScalarType type) -> const std::pair<torch::Tensor, torch::Tensor>& {
    for (const auto& [t, pair] : cast) {
      if (t == type) return pair;
    }
    cast.emplace_back(type, std::make_pair(sqrt_bias_correction2.to(type), neg_step_size.to(type)));
    return cast.back().second;
  };

  // AdamW's decay factor per weight decay and parameter type, computed once a step.
  std::vector<std::tuple<double, torch::ScalarType, torch::Tensor>> decays;
  auto decay_for = [&](double weight_decay, torch::ScalarType type) -> torch::Tensor {
    for (const auto& [wd, t, factor] : decays) {
      if (wd == weight_decay && t == type) return factor;
    }
    decays.emplace_back(weight_decay, type, (1 - lr * weight_decay).to(type));
    return std::get<2>(decays.back());
  };

  struct Update {
    int64_t index;
    Moments moments;
    torch::Tensor p, exp_avg, exp_avg_sq, max_exp_avg_sq;
  };
  std::vector<Update> updates;
  std::vector<torch::Tensor> finite;
  for (int64_t i = 0; i < n; ++i) {
    if (!taking_part[i]) continue;
    const torch::Tensor& p = parameters[i];
    const Options& o = options[i];
    auto it = states.find(key_of<StateKey>(p));
    if (it == states.end()) {
      // As libtorch's step creates it.
      torch::Tensor exp_avg = torch::zeros_like(p, torch::MemoryFormat::Preserve);
      torch::Tensor exp_avg_sq = torch::zeros_like(p, torch::MemoryFormat::Preserve);
      torch::Tensor max_exp_avg_sq =
          o.amsgrad ? torch::zeros_like(p, torch::MemoryFormat::Preserve) : torch::Tensor();
      std::unique_ptr<torch::optim::OptimizerParamState> created;
      if (adamw_) {
        auto s = std::make_unique<torch::optim::AdamWParamState>();
        s->step(0);
        s->exp_avg(exp_avg);
        s->exp_avg_sq(exp_avg_sq);
        if (o.amsgrad) s->max_exp_avg_sq(max_exp_avg_sq);
        created = std::move(s);
      } else {
        auto s = std::make_unique<torch::optim::AdamParamState>();
        s->step(0);
        s->exp_avg(exp_avg);
        s->exp_avg_sq(exp_avg_sq);
        if (o.amsgrad) s->max_exp_avg_sq(max_exp_avg_sq);
        created = std::move(s);
      }
      states[key_of<StateKey>(p)] = std::move(created);
      it = states.find(key_of<StateKey>(p));
    }
    Moments m;
    if (auto* adam = dynamic_cast<torch::optim::AdamParamState*>(it->second.get())) {
      m = moments_of(*adam);
    } else if (auto* adamw = dynamic_cast<torch::optim::AdamWParamState*>(it->second.get())) {
      m = moments_of(*adamw);
    }
    TTS_CHECK(m.state != nullptr, "DeviceAdam: a parameter's state is not Adam's");
    const auto& [sqrt_bc2_all, neg_step_all] = scalars_for(p.scalar_type());

    // libtorch's Adam/AdamW step, out of place, into this parameter's scratch tensors.
    if (scratch_.size() != static_cast<size_t>(n)) scratch_.resize(static_cast<size_t>(n));
    Scratch& out = scratch_[static_cast<size_t>(i)];
    auto fit = [&](torch::Tensor& t, const torch::Tensor& like) {
      if (!t.defined() || t.sizes() != like.sizes() || t.scalar_type() != like.scalar_type() ||
          t.device() != like.device()) {
        t = torch::empty_like(like, torch::MemoryFormat::Contiguous);
      }
    };
    fit(out.p, p);
    fit(out.exp_avg, m.exp_avg);
    fit(out.exp_avg_sq, m.exp_avg_sq);
    fit(out.denom, m.exp_avg_sq);
    torch::Tensor grad = p.grad();
    if (!adamw_ && o.weight_decay != 0) grad = grad.add(p, o.weight_decay);
    torch::Tensor base = p;
    if (adamw_ && o.weight_decay != 0) {
      // 1 - lr * weight_decay in float64, cast to the parameter's type, as libtorch's Scalar.
      base = p.mul(decay_for(o.weight_decay, p.scalar_type()));
    }
    torch::Tensor exp_avg = torch::mul_out(out.exp_avg, m.exp_avg, o.beta1).add_(grad, 1 - o.beta1);
    torch::Tensor exp_avg_sq =
        torch::mul_out(out.exp_avg_sq, m.exp_avg_sq, o.beta2).addcmul_(grad, grad, 1 - o.beta2);
    torch::Tensor max_exp_avg_sq;
    if (o.amsgrad) {
      fit(out.max_exp_avg_sq, m.max_exp_avg_sq);
      max_exp_avg_sq = torch::maximum_out(out.max_exp_avg_sq, m.max_exp_avg_sq, exp_avg_sq);
    }
    torch::Tensor denom = torch::sqrt_out(out.denom, o.amsgrad ? max_exp_avg_sq : exp_avg_sq)
                              .div_(sqrt_bc2_all[i])
                              .add_(o.eps);
    // p.addcdiv_(exp_avg, denom, -step_size) is p + (-step_size * exp_avg) / denom.
    torch::Tensor new_p = torch::mul_out(out.p, exp_avg, neg_step_all[i]).div_(denom).add_(base);

    // Finite where the smallest and the largest value are (a NaN makes both NaN): no tensor of
    // the parameter's size.
    for (const torch::Tensor* t : {&new_p, &exp_avg, &exp_avg_sq, &max_exp_avg_sq}) {
      if (t->defined() && t->numel() > 0) {
        auto [low, high] = torch::aminmax(*t);
        finite.push_back(torch::isfinite(low).logical_and(torch::isfinite(high)));
      }
    }
    updates.push_back(Update{i, m, new_p, exp_avg, exp_avg_sq, max_exp_avg_sq});
  }
  torch::Tensor keep =
      finite.empty() ? torch::ones({}, torch::TensorOptions().dtype(torch::kBool).device(device))
                     : torch::stack(finite).all();
  if (allowed.defined()) keep = keep.logical_and(allowed);
  for (Update& u : updates) {
    torch::Tensor p = parameters[u.index];
    const torch::Tensor here = part.defined() ? keep.logical_and(part[u.index]) : keep;
    torch::where_out(p, here, u.p, p);
    torch::where_out(u.moments.exp_avg, here, u.exp_avg, u.moments.exp_avg);
    torch::where_out(u.moments.exp_avg_sq, here, u.exp_avg_sq, u.moments.exp_avg_sq);
    if (u.max_exp_avg_sq.defined()) {
      torch::where_out(u.moments.max_exp_avg_sq, here, u.max_exp_avg_sq, u.moments.max_exp_avg_sq);
    }
  }
  torch::where_out(steps_, keep, next_steps_, steps_);
  return keep;
}

void DeviceAdam::write_back() {
  if (!steps_.defined()) return;
  const torch::Tensor steps = host_read(steps_);
  const double* values = steps.data_ptr<double>();
  auto& states = optimizer_.state();
  for (size_t i = 0; i < parameters_.size(); ++i) {
    const StateKey key = key_of<StateKey>(parameters_[i]);
    auto it = states.find(key);
    if (it == states.end()) continue;
    const auto step = static_cast<int64_t>(values[i]);
    if (step == 0) {
      states.erase(it);
    } else {
      set_step(*it->second, step);
    }
  }
}

}  // namespace tts::train
