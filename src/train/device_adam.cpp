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

namespace {

// The parameters and each one's group options, in the optimizer's order; one pair of betas.
struct Gathered {
  std::vector<torch::Tensor> parameters;
  std::vector<Options> options;
};

Gathered gather(torch::optim::Optimizer& optimizer, bool adamw) {
  Gathered g;
  for (auto& group : optimizer.param_groups()) {
    const Options o = adamw ? options_of(static_cast<torch::optim::AdamWOptions&>(group.options()))
                            : options_of(static_cast<torch::optim::AdamOptions&>(group.options()));
    for (const torch::Tensor& p : group.params()) {
      g.parameters.push_back(p);
      g.options.push_back(o);
    }
  }
  TTS_CHECK(!g.parameters.empty(), "DeviceAdam: the optimizer has no parameters");
  for (const Options& o : g.options) {
    TTS_CHECK(o.beta1 == g.options.front().beta1 && o.beta2 == g.options.front().beta2,
              "DeviceAdam: the optimizer's groups have different betas");
  }
  return g;
}

// `p`'s moments, its state created first as libtorch's step creates it when it has none: one
// template for Adam's and AdamW's states.
template <class State>
Moments ensure_state(StateMap& states, const torch::Tensor& p, const Options& o) {
  const StateKey key = key_of<StateKey>(p);
  if (states.find(key) == states.end()) {
    auto created = std::make_unique<State>();
    created->step(0);
    created->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
    created->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
    if (o.amsgrad) created->max_exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
    states[key] = std::move(created);
  }
  auto* state = dynamic_cast<State*>(states.find(key)->second.get());
  TTS_CHECK(state != nullptr, "DeviceAdam: a parameter's state is not Adam's");
  return moments_of(*state);
}

// What a step computes once for every parameter: per parameter the bias corrections and step
// size (as libtorch's host doubles: 1 - beta^step, -lr / bias_correction1), cast once per
// parameter type as a double Scalar is cast where it meets a float tensor; AdamW's decay factor
// per weight decay and type.
class StepScalars {
 public:
  StepScalars(const torch::Tensor& lr, const torch::Tensor& next_steps, double beta1, double beta2)
      : lr_(lr),
        sqrt_bias_correction2_((1 - torch::pow(beta2, next_steps)).sqrt()),
        neg_step_size_(torch::div(lr.neg(), 1 - torch::pow(beta1, next_steps))) {}

  // (sqrt(bias_correction2), -step_size) per parameter, in `type`.
  const std::pair<torch::Tensor, torch::Tensor>& per_parameter(torch::ScalarType type) {
    for (const auto& [t, pair] : cast_) {
      if (t == type) return pair;
    }
    cast_.emplace_back(type,
                       std::make_pair(sqrt_bias_correction2_.to(type), neg_step_size_.to(type)));
    return cast_.back().second;
  }

  // 1 - lr * weight_decay in float64, cast to `type`, as libtorch's Scalar.
  torch::Tensor decay(double weight_decay, torch::ScalarType type) {
    for (const auto& [wd, t, factor] : decays_) {
      if (wd == weight_decay && t == type) return factor;
    }
    decays_.emplace_back(weight_decay, type, (1 - lr_ * weight_decay).to(type));
    return std::get<2>(decays_.back());
  }

 private:
  torch::Tensor lr_, sqrt_bias_correction2_, neg_step_size_;
  std::vector<std::pair<torch::ScalarType, std::pair<torch::Tensor, torch::Tensor>>> cast_;
  std::vector<std::tuple<double, torch::ScalarType, torch::Tensor>> decays_;
};

// One parameter's candidate weight and moments, not yet kept.
struct Proposal {
  int64_t index;
  Moments moments;
  torch::Tensor p, exp_avg, exp_avg_sq, max_exp_avg_sq;
};

// libtorch's Adam/AdamW step for parameter `index`, out of place, into its scratch tensors `out`;
// pushes the finiteness of what it computed onto `finite`.
Proposal propose(int64_t index, const torch::Tensor& p, const Options& o, const Moments& m,
                 bool adamw, StepScalars& scalars, AdamScratch& out,
                 std::vector<torch::Tensor>& finite) {
  const auto& [sqrt_bc2_all, neg_step_all] = scalars.per_parameter(p.scalar_type());
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
  if (!adamw && o.weight_decay != 0) grad = grad.add(p, o.weight_decay);
  torch::Tensor base = p;
  if (adamw && o.weight_decay != 0) base = p.mul(scalars.decay(o.weight_decay, p.scalar_type()));
  torch::Tensor exp_avg = torch::mul_out(out.exp_avg, m.exp_avg, o.beta1).add_(grad, 1 - o.beta1);
  torch::Tensor exp_avg_sq =
      torch::mul_out(out.exp_avg_sq, m.exp_avg_sq, o.beta2).addcmul_(grad, grad, 1 - o.beta2);
  torch::Tensor max_exp_avg_sq;
  if (o.amsgrad) {
    fit(out.max_exp_avg_sq, m.max_exp_avg_sq);
    max_exp_avg_sq = torch::maximum_out(out.max_exp_avg_sq, m.max_exp_avg_sq, exp_avg_sq);
  }
  torch::Tensor denom = torch::sqrt_out(out.denom, o.amsgrad ? max_exp_avg_sq : exp_avg_sq)
                            .div_(sqrt_bc2_all[index])
                            .add_(o.eps);
  // p.addcdiv_(exp_avg, denom, -step_size) is p + (-step_size * exp_avg) / denom.
  torch::Tensor new_p = torch::mul_out(out.p, exp_avg, neg_step_all[index]).div_(denom).add_(base);
  // Finite where the smallest and the largest value are (a NaN makes both NaN): no tensor of the
  // parameter's size.
  for (const torch::Tensor* t : {&new_p, &exp_avg, &exp_avg_sq, &max_exp_avg_sq}) {
    if (t->defined() && t->numel() > 0) {
      auto [low, high] = torch::aminmax(*t);
      finite.push_back(torch::isfinite(low).logical_and(torch::isfinite(high)));
    }
  }
  return Proposal{index, m, new_p, exp_avg, exp_avg_sq, max_exp_avg_sq};
}

// Keeps each proposal where `keep` (and, where given, its parameter's `part`) says so, in place.
void commit(std::vector<Proposal>& proposals, const std::vector<torch::Tensor>& parameters,
            const torch::Tensor& keep, const torch::Tensor& part) {
  for (Proposal& u : proposals) {
    torch::Tensor p = parameters[u.index];
    const torch::Tensor here = part.defined() ? keep.logical_and(part[u.index]) : keep;
    torch::where_out(p, here, u.p, p);
    torch::where_out(u.moments.exp_avg, here, u.exp_avg, u.moments.exp_avg);
    torch::where_out(u.moments.exp_avg_sq, here, u.exp_avg_sq, u.moments.exp_avg_sq);
    if (u.max_exp_avg_sq.defined()) {
      torch::where_out(u.moments.max_exp_avg_sq, here, u.max_exp_avg_sq, u.moments.max_exp_avg_sq);
    }
  }
}

}  // namespace

void DeviceAdam::prepare_counts(const std::vector<torch::Tensor>& parameters,
                                const std::vector<bool>& taking_part) {
  const int64_t n = static_cast<int64_t>(parameters.size());
  const auto counts =
      torch::TensorOptions().dtype(torch::kFloat64).device(parameters.front().device());
  if (!steps_.defined()) {
    // The step counts the host states hold now (a checkpoint's, or none): filled in place, no
    // copy from host memory.
    auto& states = optimizer_.state();
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
  if (taking_part != taking_part_host_) {
    taking_part_host_ = taking_part;
    taking_part_ = torch::zeros({n}, counts);
    for (int64_t i = 0; i < n; ++i) {
      if (taking_part[i]) taking_part_[i].fill_(1.0);
    }
  }
}

torch::Tensor DeviceAdam::step(const torch::Tensor& lr, const torch::Tensor& allowed,
                               const torch::Tensor& taking_part_on_device) {
  torch::NoGradGuard no_grad;
  const Gathered g = gather(optimizer_, adamw_);
  const int64_t n = static_cast<int64_t>(g.parameters.size());
  std::vector<bool> taking_part(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) taking_part[i] = g.parameters[i].grad().defined();
  prepare_counts(g.parameters, taking_part);
  torch::Tensor part;  // bool [n], where taking_part_on_device is given
  if (taking_part_on_device.defined()) {
    torch::add_out(next_steps_, steps_, taking_part_ * taking_part_on_device);
    part = taking_part_on_device > 0;
  } else {
    torch::add_out(next_steps_, steps_, taking_part_);
  }
  StepScalars scalars(lr, next_steps_, g.options.front().beta1, g.options.front().beta2);
  if (scratch_.size() != static_cast<size_t>(n)) scratch_.resize(static_cast<size_t>(n));
  std::vector<Proposal> proposals;
  std::vector<torch::Tensor> finite;
  for (int64_t i = 0; i < n; ++i) {
    if (!taking_part[i]) continue;
    const torch::Tensor& p = g.parameters[i];
    const Options& o = g.options[i];
    const Moments m = adamw_ ? ensure_state<torch::optim::AdamWParamState>(optimizer_.state(), p, o)
                             : ensure_state<torch::optim::AdamParamState>(optimizer_.state(), p, o);
    proposals.push_back(
        propose(i, p, o, m, adamw_, scalars, scratch_[static_cast<size_t>(i)], finite));
  }
  torch::Tensor keep =
      finite.empty()
          ? torch::ones(
                {},
                torch::TensorOptions().dtype(torch::kBool).device(g.parameters.front().device()))
          : torch::stack(finite).all();
  if (allowed.defined()) keep = keep.logical_and(allowed);
  commit(proposals, g.parameters, keep, part);
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
