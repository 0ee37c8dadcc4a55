#include "tts/checkpoint/warm_start.h"

#include <torch/torch.h>

#include "tts/checkpoint/checkpoint.h"
#include "tts/checkpoint/state_dict.h"
#include "tts/core/error.h"

namespace tts::checkpoint {

std::string warm_start(torch::nn::Module& model, const std::string& path,
                       const std::vector<std::string>& skip) {
  std::string source;
  const Checkpoint checkpoint = load_newest_checkpoint(path, &source);
  checkpoint_config(checkpoint, source);  // a checkpoint is whole only with a sound config
  return warm_start_from(model, checkpoint, source, "tts-train checkpoint", skip);
}

std::string warm_start_from(torch::nn::Module& model, const Checkpoint& checkpoint,
                            const std::string& source, const std::string& kind,
                            const std::vector<std::string>& skip) {
  return warm_start_tensors(model_tensors(model),
                            {checkpoint.tensors.begin(), checkpoint.tensors.end()}, source, kind,
                            skip);
}

std::string warm_start_tensors(std::vector<ModelTensor> targets,
                               std::map<std::string, torch::Tensor> source,
                               const std::string& source_name, const std::string& kind,
                               const std::vector<std::string>& skip, const WarmStartRemap& remap) {
  auto skipped_by = [&](const std::string& name) {
    for (const std::string& prefix : skip) {
      if (name.rfind(prefix, 0) == 0) return true;
    }
    return false;
  };
  std::vector<ModelTensor> kept;
  std::vector<std::string> skipped;
  for (ModelTensor& tensor : targets) {
    if (skipped_by(tensor.name) || skipped_by(tensor.stored_name)) {
      skipped.push_back(tensor.name);
    } else {
      kept.push_back(std::move(tensor));
    }
  }
  StateDictOptions options;
  options.file = fmt::format("--init-from {} '{}'", kind, source_name);
  options.partial = true;
  options.fix = [](const std::vector<TensorMatch>& mismatched) {
    std::vector<std::string> names;
    for (const TensorMatch& m : mismatched) names.push_back(m.target.stored_name);
    return fmt::format(
        "make the config's dimensions match the checkpoint's, or leave those tensors "
        "initialized: --init-skip {}",
        fmt::join(names, " "));
  };
  const std::string remapped = remap ? remap(source, kept) : std::string();
  StateDictMatch match = match_state_dict(kept, source, options);
  copy_matched(match.matched);
  auto listed = [](const std::vector<std::string>& names) {
    return names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "));
  };
  return fmt::format(
      "warm start from {} ({}): {} tensors taken; skipped: {}; not in the checkpoint (kept as "
      "initialized): {}{}",
      source_name, kind, match.matched.size(), listed(skipped), listed(match.missing), remapped);
}

}  // namespace tts::checkpoint
