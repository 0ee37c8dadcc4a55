#include "tts/train/freeze.h"

#include <torch/torch.h>

#include <algorithm>
#include <set>

#include "tts/core/error.h"
#include "tts/train/family.h"

namespace tts::train {
namespace {

bool in_part(const std::string& name, const std::string& part) {
  return name == part || (name.size() > part.size() && name.compare(0, part.size(), part) == 0 &&
                          name[part.size()] == '.');
}

bool contains(const std::set<const void*>& set, const torch::Tensor& tensor) {
  return set.count(tensor.unsafeGetTensorImpl()) > 0;
}

}  // namespace

std::string freeze_parts(Family& family, const std::vector<std::string>& parts) {
  if (parts.empty()) return "";
  const auto named = family.module().named_parameters(/*recurse=*/true);
  std::set<const void*> frozen;
  std::set<std::string> top_level;
  int64_t frozen_elements = 0, tensors = 0;
  for (const std::string& part : parts) {
    bool matched = false;
    for (const auto& item : named) {
      if (!in_part(item.key(), part)) continue;
      matched = true;
      if (frozen.insert(item.value().unsafeGetTensorImpl()).second) {
        frozen_elements += item.value().numel();
        ++tensors;
      }
    }
    if (!matched) {
      for (const auto& item : named) top_level.insert(item.key().substr(0, item.key().find('.')));
      TTS_USAGE_CHECK(false,
                      "train.freeze names '{}', which is no part of this model: its parameters' "
                      "names start with {} (tts-train inspect CHECKPOINT lists every name; a part "
                      "is a name or a prefix ending before a dot, e.g. decoder.attention)",
                      part, fmt::join(top_level, ", "));
    }
  }
  // Every optimizer keeps something to train, checked before anything changes.
  std::vector<std::vector<torch::Tensor>> kept(family.optimizers().size());
  for (size_t i = 0; i < kept.size(); ++i) {
    const OptimizerSlot& slot = family.optimizers()[i];
    for (const torch::Tensor& p : slot.parameters) {
      if (!contains(frozen, p)) kept[i].push_back(p);
    }
    TTS_USAGE_CHECK(!kept[i].empty(),
                    "train.freeze [{}] freezes every parameter of optimizer '{}', which would "
                    "train nothing; leave some of its parameters out of train.freeze",
                    fmt::join(parts, ", "), slot.name);
  }
  int64_t trained = 0;
  for (size_t i = 0; i < kept.size(); ++i) {
    OptimizerSlot& slot = family.optimizers()[i];
    // The optimizer is fresh (no state yet): its groups drop the frozen tensors, so its state,
    // saved and restored by position, covers the trained ones alone.
    for (auto& group : slot.optimizer->param_groups()) {
      auto& params = group.params();
      params.erase(std::remove_if(params.begin(), params.end(),
                                  [&](const torch::Tensor& p) { return contains(frozen, p); }),
                   params.end());
    }
    slot.parameters = std::move(kept[i]);
    for (const torch::Tensor& p : slot.parameters) trained += p.numel();
  }
  for (const auto& item : named) {
    if (contains(frozen, item.value())) item.value().set_requires_grad(false);
  }
  return fmt::format("train.freeze [{}]: {} tensors ({:.2f}M parameters) frozen, {:.2f}M trained",
                     fmt::join(parts, ", "), tensors, static_cast<double>(frozen_elements) / 1e6,
                     static_cast<double>(trained) / 1e6);
}

}  // namespace tts::train
