#include "tts/checkpoint/warm_start.h"

#include <torch/torch.h>

#include <map>

#include "tts/checkpoint/checkpoint.h"
#include "tts/checkpoint/nvidia.h"
#include "tts/checkpoint/state_dict.h"
#include "tts/core/error.h"

namespace tts::checkpoint {
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
  std::map<std::string, torch::Tensor> source;  // under the file's names, ours or NVIDIA's
  std::string source_name = path;
  if (ours) {
    Checkpoint checkpoint = load_newest_checkpoint(path, &source_name);
    checkpoint_config(checkpoint, source_name);  // a checkpoint is whole only with a sound config
    source.insert(checkpoint.tensors.begin(), checkpoint.tensors.end());
  } else {
    source = read_nvidia_state_dict(path);
  }
  std::vector<ModelTensor> targets;
  std::vector<std::string> skipped;
  for (ModelTensor& tensor : ours ? model_tensors(model) : model_tensors(model, nvidia_name)) {
    if (starts_with_any(tensor.name, skip) || starts_with_any(tensor.stored_name, skip)) {
      skipped.push_back(tensor.name);
    } else {
      targets.push_back(std::move(tensor));
    }
  }
  StateDictOptions options;
  options.file = fmt::format("--init-from {} '{}'", ours ? "checkpoint" : "NVIDIA/tacotron2 file",
                             source_name);
  options.partial = true;
  options.fix = [](const std::vector<TensorMatch>& mismatched) {
    std::vector<std::string> names;
    for (const TensorMatch& m : mismatched) names.push_back(m.target.stored_name);
    return fmt::format(
        "make the config's dimensions match the checkpoint's, or leave those tensors "
        "initialized: --init-skip {}",
        fmt::join(names, " "));
  };
  StateDictMatch match = match_state_dict(targets, source, options);
  copy_matched(match.matched);
  return fmt::format(
      "warm start from {} ({}): {} tensors taken; skipped: {}; not in the checkpoint (kept as "
      "initialized): {}",
      source_name, ours ? "tts-train checkpoint" : "NVIDIA/tacotron2 file", match.matched.size(),
      join_or_none(skipped), join_or_none(match.missing));
}

}  // namespace tts::checkpoint
