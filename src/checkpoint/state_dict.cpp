#include "tts/checkpoint/state_dict.h"

#include <torch/torch.h>

#include <set>

#include "tts/checkpoint/state_dict_keys.h"
#include "tts/core/error.h"
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
    if (!options.partial && found.count(name) == 0) unexpected.push_back(name);
  }
  if (missing.empty() && mismatched.empty() && unexpected.empty()) return match;

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
