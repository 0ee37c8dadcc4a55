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
  std::map<std::string, torch::Tensor> tensors(checkpoint.tensors.begin(),
                                               checkpoint.tensors.end());
  std::vector<ModelTensor> targets;
  std::vector<std::string> skipped;
  for (ModelTensor& tensor : model_tensors(model)) {
    bool skip_it = false;
    for (const std::string& prefix : skip) skip_it = skip_it || tensor.name.rfind(prefix, 0) == 0;
    if (skip_it) {
      skipped.push_back(tensor.name);
    } else {
      targets.push_back(std::move(tensor));
    }
  }
  StateDictOptions options;
  options.file = fmt::format("--init-from {} '{}'", kind, source);
  options.partial = true;
  options.fix = [](const std::vector<TensorMatch>& mismatched) {
    std::vector<std::string> names;
    for (const TensorMatch& m : mismatched) names.push_back(m.target.stored_name);
    return fmt::format(
        "make the config's dimensions match the checkpoint's, or leave those tensors "
        "initialized: --init-skip {}",
        fmt::join(names, " "));
  };
  StateDictMatch match = match_state_dict(targets, tensors, options);
  copy_matched(match.matched);
  auto listed = [](const std::vector<std::string>& names) {
    return names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "));
  };
  return fmt::format(
      "warm start from {} ({}): {} tensors taken; skipped: {}; not in the checkpoint (kept as "
      "initialized): {}",
      source, kind, match.matched.size(), listed(skipped), listed(match.missing));
}

}  // namespace tts::checkpoint
