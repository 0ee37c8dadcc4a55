// Between jik876's files (interop.h) and our checkpoints.
#include <torch/torch.h>

#include "tts/checkpoint/checkpoint.h"
#include "tts/core/error.h"
#include "tts/models/hifigan/family.h"
#include "tts/models/hifigan/interop.h"

namespace tts::hifigan {
namespace {

void fill(torch::nn::Module& module, const std::map<std::string, torch::Tensor>& tensors,
          const char* network) {
  if (tensors.empty()) return;  // keeps its initialization
  torch::NoGradGuard no_grad;
  auto copy = [&](const std::string& name, torch::Tensor& target) {
    auto it = tensors.find(name);
    TTS_CHECK(it != tensors.end(), "hifigan import: the {} lacks {}", network, name);
    TTS_CHECK(it->second.sizes() == target.sizes(), "hifigan import: {}.{} is [{}], expected [{}]",
              network, name, fmt::join(it->second.sizes(), ", "), fmt::join(target.sizes(), ", "));
    target.copy_(it->second);
  };
  for (auto& item : module.named_parameters()) copy(item.key(), item.value());
  for (auto& item : module.named_buffers()) copy(item.key(), item.value());
}

}  // namespace

checkpoint::Checkpoint checkpoint_from_jik876(const HifiganImport& imported,
                                              const config::Config& config) {
  TTS_USAGE_CHECK(config.model.kind == config::ModelKind::kHifigan,
                  "hifigan import: the config's model.kind is {}, not hifigan", config.model.kind);
  torch::manual_seed(config.train.seed);
  Hifigan model(config.hifigan, config.audio.n_mels);
  fill(*model->generator, imported.generator, "generator");
  fill(*model->mpd, imported.mpd, "multi-period discriminator");
  fill(*model->msd, imported.msd, "multi-scale discriminator");
  checkpoint::TrainingState state;
  state.step = imported.steps;
  state.epoch = imported.epoch;
  state.phase.batch_size = config.train.batch_size;
  return checkpoint::capture(*model, {}, state, config::dump_config(config));
}

Jik876State jik876_from_checkpoint(const checkpoint::Checkpoint& checkpoint) {
  Jik876State state;
  state.generator = checkpoint::tensors_with_prefix(checkpoint, "generator.");
  state.mpd = checkpoint::tensors_with_prefix(checkpoint, "mpd.");
  state.msd = checkpoint::tensors_with_prefix(checkpoint, "msd.");
  TTS_CHECK(!state.generator.empty(), "the checkpoint holds no generator.* tensors");
  state.steps = checkpoint.state.step;
  state.epoch = checkpoint.state.epoch;
  return state;
}

}  // namespace tts::hifigan
