// `tts-train forward` on a WaveNet checkpoint: teacher-forced logits of audio given its mel, and
// r9y9's loss of them.
#include <torch/torch.h>

#include "tts/core/error.h"
#include "tts/models/wavenet/conversion/r9y9.h"
#include "tts/models/wavenet/layers/mixture.h"
#include "tts/models/wavenet/layers/network.h"
#include "tts/models/wavenet/training/family.h"

namespace tts::wavenet {
namespace {

std::map<std::string, torch::Tensor> run(const models::TrainedCheckpoint& trained,
                                         const std::map<std::string, torch::Tensor>& inputs) {
  const config::WavenetOptions& options = trained.config.wavenet;
  const int64_t n_mels = trained.config.audio.n_mels;
  torch::Tensor x = inputs.at("audio");
  torch::Tensor mel = inputs.at("mel");
  // audio [T], [B, T] or r9y9's [B, 1, T]; mel ours [frames, n_mels] or r9y9's [B, n_mels, F].
  const bool batched = x.dim() >= 2;
  TTS_USAGE_CHECK(x.dim() <= 2 || (x.dim() == 3 && x.size(1) == 1),
                  "forward: input audio: expected [T], [batch, T] or [batch, 1, T], found [{}]",
                  fmt::join(x.sizes(), ", "));
  x = x.reshape({batched ? x.size(0) : 1, 1, x.size(-1)});
  if (mel.dim() == 2) {
    TTS_USAGE_CHECK(mel.size(1) == n_mels,
                    "forward: input mel: expected [frames, {}] (audio.n_mels {}), found [{}]",
                    n_mels, n_mels, fmt::join(mel.sizes(), ", "));
    mel = mel.t().unsqueeze(0);
  }
  TTS_USAGE_CHECK(mel.dim() == 3 && mel.size(1) == n_mels && mel.size(0) == x.size(0),
                  "forward: input mel: expected [frames, {}] or [{}, {}, frames] (one per audio "
                  "item), found [{}]",
                  n_mels, x.size(0), n_mels, fmt::join(mel.sizes(), ", "));
  WaveNet network = trained_network(trained);
  // r9y9's forward takes the mel padded by cin_pad frames each side (its collate pads it); a mel
  // of exactly T / hop frames is padded here as r9y9 pads a whole utterance (pad_mel).
  const int64_t samples = x.size(2);
  const int64_t hop = network->hop();
  if (mel.size(2) * hop == samples && options.cin_pad > 0) mel = pad_mel(mel, options.cin_pad);
  TTS_USAGE_CHECK((mel.size(2) - 2 * options.cin_pad) * hop == samples,
                  "forward: {} audio samples need {} mel frames (hop {}), or {} with the "
                  "wavenet.cin_pad {} frames each side r9y9's forward takes; found {}",
                  samples, samples / hop, hop, samples / hop + 2 * options.cin_pad, options.cin_pad,
                  mel.size(2));
  torch::NoGradGuard no_grad;
  torch::Tensor speaker;
  if (auto found = inputs.find("speaker"); found != inputs.end()) {
    speaker = found->second.round().to(torch::kInt64).reshape({-1});
  }
  torch::Tensor logits = network->forward(x.contiguous(), mel.contiguous(), speaker);  // [B, C, T]
  torch::Tensor loss = teacher_forced_loss(logits, x, options);
  return {{"logits", batched ? logits : logits.squeeze(0)}, {"loss", loss.reshape({1})}};
}

}  // namespace

models::ForwardRole forward_role() {
  models::ForwardRole role;
  role.inputs = {{"audio", "[T], [batch, T] or [batch, 1, T] samples in [-1, 1]"},
                 {"mel",
                  "[frames, n_mels] (ours) or [batch, n_mels, frames] (r9y9's), of T / hop frames "
                  "or with wavenet.cin_pad frames of padding each side as r9y9's forward takes"},
                 {"speaker", "[batch] speaker ids, for a network with a speaker embedding", false}};
  role.outputs = {{"logits",
                   "[out_channels, T], or [batch, out_channels, T]: column t predicts "
                   "sample t + 1"},
                  {"loss",
                   "[1]: the mean negative log-likelihood per predicted sample, r9y9's loss over "
                   "batch * (T - 1) targets divided by their count"}};
  role.run = run;
  return role;
}

}  // namespace tts::wavenet
