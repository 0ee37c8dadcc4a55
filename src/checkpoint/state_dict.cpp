#include "tts/checkpoint/state_dict.h"

#include <torch/torch.h>

#include <set>

#include "tts/checkpoint/state_dict_keys.h"
#include "tts/core/error.h"
#include "tts/core/printable.h"
#include "tts/formats/torch_file.h"

namespace tts::checkpoint {
namespace {

// The first few names, then how many more: a network of another width differs in every tensor.
std::string join_or_none(const std::vector<std::string>& items) {
  constexpr size_t kShown = 8;
  if (items.empty()) return "none";
  if (items.size() <= kShown) return fmt::format("{}", fmt::join(items, ", "));
  std::vector<std::string> shown(items.begin(), items.begin() + kShown);
  return fmt::format("{}, and {} more", fmt::join(shown, ", "), items.size() - kShown);
}

}  // namespace

std::vector<ModelTensor> model_tensors(
    torch::nn::Module& model, const std::function<std::string(const std::string&)>& stored_name) {
  std::vector<ModelTensor> tensors;
  auto add = [&](const std::string& name, const torch::Tensor& tensor, bool parameter) {
    tensors.push_back({name, stored_name ? stored_name(name) : name, tensor, parameter});
  };
  for (const auto& item : model.named_parameters()) add(item.key(), item.value(), true);
  for (const auto& item : model.named_buffers()) add(item.key(), item.value(), false);
  return tensors;
}

StateDictMatch match_state_dict(const std::vector<ModelTensor>& model,
                                const std::map<std::string, torch::Tensor>& stored,
                                const StateDictOptions& options) {
  StateDictMatch match;
  std::vector<std::string> missing;
  std::vector<TensorMatch> mismatched;
  std::set<std::string> found;
  for (const ModelTensor& target : model) {
    auto it = stored.find(target.stored_name);
    if (it == stored.end()) {
      if (options.partial) {
        match.missing.push_back(target.name);
      } else {
        missing.push_back(target.stored_name);
      }
      continue;
    }
    found.insert(it->first);
    if (it->second.sizes() == target.tensor.sizes()) {
      match.matched.push_back({target, it->second});
    } else {
      mismatched.push_back({target, it->second});
    }
  }
  std::vector<std::string> unexpected;
  for (const auto& [name, tensor] : stored) {
    if (!options.partial && found.count(name) == 0) unexpected.push_back(printable(name));
  }
  if (missing.empty() && mismatched.empty() && unexpected.empty()) {
    for (const TensorMatch& m : match.matched) {
      require_finite(m.stored, fmt::format("{}: tensor '{}'", options.file, m.target.stored_name));
    }
    return match;
  }

  std::vector<std::string> shapes;
  for (const TensorMatch& m : mismatched) {
    shapes.push_back(fmt::format("{} (checkpoint {}, model {})", m.target.stored_name,
                                 fmt::join(m.stored.sizes(), "x"),
                                 fmt::join(m.target.tensor.sizes(), "x")));
  }
  std::string lists = fmt::format("shape differs: {}", join_or_none(shapes));
  if (!options.partial) {
    lists = fmt::format("missing: {}; {}; not in the model: {}", join_or_none(missing), lists,
                        join_or_none(unexpected));
  }
  std::string fix = options.fix ? options.fix(mismatched) : "";
  throw Error(fmt::format("{} does not fit the model of the config ({}){}", options.file, lists,
                          fix.empty() ? "" : "; " + fix));
}

void require_finite(const torch::Tensor& tensor, const std::string& what, const std::string& fix) {
  if (!tensor.defined() || !tensor.is_floating_point() || tensor.numel() == 0) return;
  const int64_t bad = tensor.numel() - torch::isfinite(tensor).sum().item<int64_t>();
  TTS_CHECK(bad == 0, "{} holds {} non-finite value{} (NaN or infinity) among {}; {}", what, bad,
            bad == 1 ? "" : "s", tensor.numel(), fix);
}

void require_adam_moments(const torch::Tensor& exp_avg, const torch::Tensor& exp_avg_sq,
                          const torch::Tensor& max_exp_avg_sq, const std::string& what) {
  require_finite(exp_avg, what + " exp_avg");
  for (const auto& [name, moment] :
       {std::pair<const char*, const torch::Tensor*>{"exp_avg_sq", &exp_avg_sq},
        {"max_exp_avg_sq", &max_exp_avg_sq}}) {
    const std::string where = fmt::format("{} {}", what, name);
    require_finite(*moment, where);
    if (!moment->defined() || moment->numel() == 0) continue;
    const int64_t negative = (*moment < 0).sum().item<int64_t>();
    TTS_CHECK(negative == 0,
              "{} holds {} negative value{}: a second moment is a running mean of squares, never "
              "negative (Adam would take the square root of it); the file is damaged",
              where, negative, negative == 1 ? "" : "s");
  }
}

void copy_matched(const std::vector<TensorMatch>& matched) {
  torch::NoGradGuard no_grad;
  for (const TensorMatch& m : matched) m.target.tensor.copy_(m.stored);
}

std::map<std::string, torch::Tensor> foreign_state_dict(const formats::PickleValue& dict,
                                                        const std::string& file,
                                                        const std::string& expected,
                                                        bool floats_only) {
  using Kind = formats::PickleValue::Kind;
  TTS_CHECK(dict.kind == Kind::Dict, "'{}' holds a {}; expected {}", file, dict.kind_name(),
            expected);
  const std::string prefix = "module.";
  bool prefixed = !dict.entries.empty();
  for (const auto& [key, value] : dict.entries) {
    TTS_CHECK(key->kind == Kind::String && value->kind == Kind::Tensor &&
                  (!floats_only || value->tensor.is_floating_point()),
              "'{}': the state dict maps a {} to a {}; expected parameter names to {}tensors ({})",
              file, key->kind_name(), value->kind_name(), floats_only ? "float " : "", expected);
    check_state_dict_key(key->text, file);
    prefixed = prefixed && key->text.rfind(prefix, 0) == 0;
  }
  std::map<std::string, torch::Tensor> tensors;
  for (const auto& [key, value] : dict.entries) {
    tensors[key->text.substr(prefixed ? prefix.size() : 0)] = value->tensor;
  }
  return tensors;
}

}  // namespace tts::checkpoint
