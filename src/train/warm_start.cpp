#include "tts/train/warm_start.h"

#include <torch/torch.h>

#include <map>

#include "tts/core/error.h"
#include "tts/train/checkpoint.h"
#include "tts/train/nvidia.h"

namespace tts::train {
namespace {

bool starts_with_any(const std::string& name, const std::vector<std::string>& prefixes) {
  for (const auto& prefix : prefixes) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

std::string join_or_none(const std::vector<std::string>& items) {
  return items.empty() ? std::string("none") : fmt::format("{}", fmt::join(items, ", "));
}

}  // namespace

std::string warm_start(torch::nn::Module& model, const std::string& path,
                       const std::vector<std::string>& skip) {
  bool ours = is_tts_checkpoint(path);
  // Source tensors under our names; NVIDIA's are looked up through nvidia_name().
  std::map<std::string, torch::Tensor> source;
  std::string source_name = path;
  if (ours) {
    Checkpoint checkpoint = load_newest_checkpoint(path, &source_name);
    source.insert(checkpoint.tensors.begin(), checkpoint.tensors.end());
  } else {
    std::map<std::string, torch::Tensor> theirs = read_nvidia_state_dict(path);
    for (const auto& item : model.named_parameters()) {
      auto it = theirs.find(nvidia_name(item.key()));
      if (it != theirs.end()) source[item.key()] = it->second;
    }
    for (const auto& item : model.named_buffers()) {
      auto it = theirs.find(nvidia_name(item.key()));
      if (it != theirs.end()) source[item.key()] = it->second;
    }
  }
  std::vector<std::string> mismatched, kept, skipped;
  std::vector<std::pair<torch::Tensor, torch::Tensor>> copies;
  auto visit = [&](const std::string& name, const torch::Tensor& target) {
    std::string theirs = ours ? name : nvidia_name(name);
    if (starts_with_any(name, skip) || starts_with_any(theirs, skip)) {
      skipped.push_back(name);
      return;
    }
    auto it = source.find(name);
    if (it == source.end()) {
      kept.push_back(name);
    } else if (it->second.sizes() != target.sizes()) {
      mismatched.push_back(fmt::format("{} (checkpoint {}, model {}; --init-skip {})", theirs,
                                       fmt::join(it->second.sizes(), "x"),
                                       fmt::join(target.sizes(), "x"), theirs));
    } else {
      copies.emplace_back(target, it->second);
    }
  };
  for (const auto& item : model.named_parameters()) visit(item.key(), item.value());
  for (const auto& item : model.named_buffers()) visit(item.key(), item.value());
  TTS_CHECK(mismatched.empty(),
            "--init-from {}: tensors whose shapes differ from the model of the config: {}; make "
            "the config's dimensions match the checkpoint's or skip them with --init-skip",
            source_name, fmt::join(mismatched, ", "));
  torch::NoGradGuard no_grad;
  for (auto& [target, value] : copies) target.copy_(value.to(target.dtype()));
  return fmt::format(
      "warm start from {} ({}): {} tensors taken; skipped: {}; not in the checkpoint (kept as "
      "initialized): {}",
      source_name, ours ? "tts-train checkpoint" : "NVIDIA/tacotron2 file", copies.size(),
      join_or_none(skipped), join_or_none(kept));
}

}  // namespace tts::train
