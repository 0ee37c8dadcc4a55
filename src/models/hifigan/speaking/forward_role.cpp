// `tts-train forward` on a HiFi-GAN checkpoint: mel -> audio, the generator in eval mode.
#include <torch/torch.h>

#include "tts/core/error.h"
#include "tts/models/hifigan/layers/generator.h"
#include "tts/models/hifigan/training/family.h"

namespace tts::hifigan {
namespace {

std::map<std::string, torch::Tensor> run(const models::TrainedCheckpoint& trained,
                                         const std::map<std::string, torch::Tensor>& inputs) {
  const int64_t n_mels = trained.config.audio.n_mels;
  torch::Tensor mel = inputs.at("mel");
  // [B, n_mels, frames] as jik876's generator takes it; a 2-D mel is one utterance, ours
  // [frames, n_mels] or jik876's [n_mels, frames].
  const bool batched = mel.dim() == 3;
  TTS_USAGE_CHECK((batched && mel.size(1) == n_mels) ||
                      (mel.dim() == 2 && (mel.size(0) == n_mels || mel.size(1) == n_mels)),
                  "forward: input mel: expected [frames, {}], [{}, frames] or [batch, {}, frames] "
                  "(the vocoder's audio.n_mels is {}), found [{}]",
                  n_mels, n_mels, n_mels, n_mels, fmt::join(mel.sizes(), ", "));
  if (!batched) mel = (mel.size(1) == n_mels ? mel.t() : mel).unsqueeze(0);
  Generator generator = trained_generator(trained);
  torch::NoGradGuard no_grad;
  torch::Tensor audio = generator->forward(mel.contiguous());  // [B, 1, T]
  return {{"audio", batched ? audio : audio.reshape({-1})}};
}

}  // namespace

models::ForwardRole forward_role() {
  models::ForwardRole role;
  role.inputs = {{"mel",
                  "[frames, n_mels] (ours), [n_mels, frames] or [batch, n_mels, frames] "
                  "(jik876's)"}};
  role.outputs = {{"audio", "[frames * hop] samples; [batch, 1, frames * hop] for a batch"}};
  role.run = run;
  return role;
}

}  // namespace tts::hifigan
