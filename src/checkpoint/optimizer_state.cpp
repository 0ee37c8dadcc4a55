#include "optimizer_state.h"

#include <cmath>

#include "tts/checkpoint/state_dict.h"
#include "tts/core/error.h"

namespace tts::checkpoint {
using formats::PickleValue;
namespace {

using Kind = PickleValue::Kind;

// Adam options of one group, in this order, in the checkpoint's "group_options" list.
constexpr size_t kGroupOptions = 6;

std::string name_of(Kind kind) {
  PickleValue value;
  value.kind = kind;
  return value.kind_name();
}

// The options of an Adam group read from a file: a NaN learning rate or a beta of 1 or more
// turns every weight it updates into NaN at the next step.
void require_adam_options(const OptimizerState::Group& group, const std::string& what) {
  TTS_CHECK(std::isfinite(group.lr) && group.lr >= 0, "{}: learning rate {}; expected 0 or more",
            what, group.lr);
  for (double beta : {group.beta1, group.beta2}) {
    TTS_CHECK(beta >= 0 && beta < 1, "{}: betas ({}, {}); each must be in [0, 1)", what,
              group.beta1, group.beta2);
  }
  TTS_CHECK(std::isfinite(group.eps) && group.eps >= 0, "{}: eps {}; expected 0 or more", what,
            group.eps);
  TTS_CHECK(std::isfinite(group.weight_decay) && group.weight_decay >= 0,
            "{}: weight decay {}; expected 0 or more", what, group.weight_decay);
}

}  // namespace

const PickleValue& checkpoint_entry(const PickleValue& dict, const std::string& key, Kind kind,
                                    const std::string& path) {
  const PickleValue* value = dict.find(key);
  TTS_CHECK(value != nullptr, "{}: not a tts-train checkpoint (no '{}' entry)", path, key);
  TTS_CHECK(value->kind == kind,
            "{}: the checkpoint's '{}' entry is a {}, expected a {}; the file is damaged or not "
            "written by tts-train",
            path, key, value->kind_name(), name_of(kind));
  return *value;
}

std::vector<const PickleValue*> checkpoint_list(const PickleValue& dict, const std::string& key,
                                                Kind kind, const std::string& path) {
  std::vector<const PickleValue*> out;
  for (const auto& item : checkpoint_entry(dict, key, Kind::List, path).items) {
    TTS_CHECK(item->kind == kind, "{}: the checkpoint's '{}' list holds a {}, expected a {}", path,
              key, item->kind_name(), name_of(kind));
    out.push_back(item.get());
  }
  return out;
}

OptimizerState read_optimizer_state(const PickleValue& adam, const std::string& path) {
  OptimizerState state;
  auto options = checkpoint_list(adam, "group_options", Kind::Float, path);
  auto sizes = checkpoint_list(adam, "group_sizes", Kind::Int, path);
  TTS_CHECK(options.size() == kGroupOptions * sizes.size(),
            "{}: the checkpoint's Adam state has {} options for {} groups, expected {} per group",
            path, options.size(), sizes.size(), kGroupOptions);
  int64_t total = 0;
  for (size_t g = 0; g < sizes.size(); ++g) {
    const PickleValue* const* o = options.data() + g * kGroupOptions;
    OptimizerState::Group group;
    group.lr = o[0]->real;
    group.beta1 = o[1]->real;
    group.beta2 = o[2]->real;
    group.eps = o[3]->real;
    group.weight_decay = o[4]->real;
    group.amsgrad = o[5]->real != 0;
    group.params = sizes[g]->integer;
    TTS_CHECK(group.params >= 0 && group.params <= (int64_t{1} << 40),
              "{}: the checkpoint's Adam group {} claims {} parameters", path, g, group.params);
    require_adam_options(group, fmt::format("{}: the checkpoint's Adam group {}", path, g));
    total += group.params;
    state.groups.push_back(group);
  }
  auto steps = checkpoint_list(adam, "steps", Kind::Int, path);
  auto exp_avg = checkpoint_list(adam, "exp_avg", Kind::Tensor, path);
  auto exp_avg_sq = checkpoint_list(adam, "exp_avg_sq", Kind::Tensor, path);
  auto max_exp_avg_sq = checkpoint_list(adam, "max_exp_avg_sq", Kind::Tensor, path);
  const auto n = static_cast<size_t>(total);
  TTS_CHECK(steps.size() == n && exp_avg.size() == n && exp_avg_sq.size() == n &&
                max_exp_avg_sq.size() == n,
            "{}: the checkpoint's Adam state lists {} steps and {}/{}/{} moments for {} "
            "parameters; the file is damaged",
            path, steps.size(), exp_avg.size(), exp_avg_sq.size(), max_exp_avg_sq.size(), n);
  for (size_t i = 0; i < n; ++i) {
    OptimizerState::Param param;
    param.has_state = steps[i]->integer >= 0;
    param.step = std::max<int64_t>(steps[i]->integer, 0);
    param.exp_avg = exp_avg[i]->tensor;
    param.exp_avg_sq = exp_avg_sq[i]->tensor;
    if (max_exp_avg_sq[i]->tensor.numel() > 0) param.max_exp_avg_sq = max_exp_avg_sq[i]->tensor;
    require_adam_moments(param.exp_avg, param.exp_avg_sq, param.max_exp_avg_sq,
                         fmt::format("{}: the checkpoint's Adam state of parameter {}", path, i));
    state.params.push_back(std::move(param));
  }
  return state;
}

}  // namespace tts::checkpoint
