// Between jik876's files (conversion/jik876.h) and our checkpoints.
#include <torch/torch.h>

#include "tts/checkpoint/checkpoint.h"
#include "tts/core/error.h"
#include "tts/models/hifigan/conversion/jik876.h"
#include "tts/models/hifigan/training/family.h"

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

// Our discriminator optimizer (slot 0) holds the MPD's parameters, then the MSD's; jik876's optim_d
// chains the MSD's, then the MPD's. Moves the first `first` entries of `items` behind the rest.
template <typename T>
std::vector<T> rotated(const std::vector<T>& items, size_t first) {
  std::vector<T> out(items.begin() + static_cast<std::ptrdiff_t>(first), items.end());
  out.insert(out.end(), items.begin(), items.begin() + static_cast<std::ptrdiff_t>(first));
  return out;
}

checkpoint::OptimizerState optimizer_state(const AdamState& adam,
                                           const config::TrainOptions& train) {
  checkpoint::OptimizerState out;
  checkpoint::OptimizerState::Group group;
  group.lr = adam.lr;
  group.beta1 = train.adam_beta1;
  group.beta2 = train.adam_beta2;
  group.eps = train.adam_eps;
  group.weight_decay = train.weight_decay;
  group.params = static_cast<int64_t>(adam.params.size());
  out.groups.push_back(group);
  for (const AdamParamState& p : adam.params) {
    checkpoint::OptimizerState::Param param;
    param.has_state = p.exp_avg.defined();
    param.step = p.step;
    param.exp_avg = p.exp_avg;
    param.exp_avg_sq = p.exp_avg_sq;
    out.params.push_back(std::move(param));
  }
  return out;
}

AdamState adam_state(const checkpoint::OptimizerState& state, double initial_lr, const char* what) {
  TTS_CHECK(state.unread_archive_of.empty(),
            "the checkpoint's {} optimizer is an older version's archive, which is not read; "
            "export it without optimizer state from a checkpoint of this version",
            what);
  TTS_CHECK(state.groups.size() == 1,
            "the checkpoint's {} optimizer has {} parameter groups; jik876's have one", what,
            state.groups.size());
  AdamState out;
  out.lr = state.groups[0].lr;
  out.initial_lr = initial_lr;
  for (const checkpoint::OptimizerState::Param& p : state.params) {
    AdamParamState param;
    if (p.has_state) {
      param.exp_avg = p.exp_avg;
      param.exp_avg_sq = p.exp_avg_sq;
      param.step = p.step;
    }
    out.params.push_back(std::move(param));
  }
  return out;
}

size_t parameters_named(const checkpoint::Checkpoint& checkpoint, const std::string& prefix) {
  size_t n = 0;
  for (const std::string& name : checkpoint.parameter_names) n += name.rfind(prefix, 0) == 0;
  return n;
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
  state.batch_in_epoch = imported.batch_in_epoch;
  state.phase.batch_size = config.train.batch_size;
  checkpoint::Checkpoint out = checkpoint::capture(*model, {}, state, config::dump_config(config));
  if (imported.optim_g && imported.optim_d) {
    // Our slots: the discriminators' optimizer, then the generator's (the family's order).
    const size_t msd_params = model->msd->parameters().size();
    AdamState optim_d = *imported.optim_d;
    optim_d.params = rotated(optim_d.params, msd_params);
    out.optimizers = {optimizer_state(optim_d, config.train),
                      optimizer_state(*imported.optim_g, config.train)};
  }
  return out;
}

Jik876State jik876_from_checkpoint(const checkpoint::Checkpoint& checkpoint,
                                   const config::Config& config) {
  Jik876State state;
  state.generator = checkpoint::tensors_with_prefix(checkpoint, "generator.");
  state.mpd = checkpoint::tensors_with_prefix(checkpoint, "mpd.");
  state.msd = checkpoint::tensors_with_prefix(checkpoint, "msd.");
  TTS_CHECK(!state.generator.empty(), "the checkpoint holds no generator.* tensors");
  state.steps = checkpoint.state.step;
  state.epoch = checkpoint.state.epoch;
  state.batch_in_epoch = checkpoint.state.batch_in_epoch;
  if (checkpoint.optimizers.size() == 2 && !checkpoint.optimizers[0].empty() &&
      !checkpoint.optimizers[1].empty() && !state.mpd.empty()) {
    AdamState optim_d =
        adam_state(checkpoint.optimizers[0], config.train.learning_rate, "discriminators'");
    const size_t mpd_params = parameters_named(checkpoint, "mpd.");
    const size_t discriminator_params = mpd_params + parameters_named(checkpoint, "msd.");
    TTS_CHECK(optim_d.params.size() == discriminator_params,
              "the checkpoint's discriminators' optimizer covers {} parameters, its "
              "discriminators have {}",
              optim_d.params.size(), discriminator_params);
    optim_d.params = rotated(optim_d.params, mpd_params);
    state.optim_d = std::move(optim_d);
    state.optim_g = adam_state(checkpoint.optimizers[1], config.train.learning_rate, "generator's");
  }
  return state;
}

}  // namespace tts::hifigan
