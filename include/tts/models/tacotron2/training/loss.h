// Tacotron-2 training losses: masked MSE or L1 (train.loss) on the mel before and after the
// postnet, binary cross-entropy with pos_weight (train.stop_pos_weight) on the stop token, the
// same masked loss on linear spectrograms when the model predicts them, and the optional guided
// attention loss of Tachibana et al. 2017 (train.guided_attention_weight, _sigma).
#pragma once

#include <torch/types.h>

#include "tts/config/train_options.h"
#include "tts/models/tacotron2/layers/network.h"

namespace tts::tacotron2 {

struct Targets {
  torch::Tensor mel;          // [B, T_mel, n_mels]
  torch::Tensor mel_lengths;  // [B] int64
  torch::Tensor stop;         // [B, T_mel] float, 1 at the last frame (and may be at padding)
  torch::Tensor linear;       // [B, T_mel, n_linear]; needed only when the model predicts it
};

// What the losses read of the train section: the losses take these, not the whole section.
struct LossOptions {
  config::MelLoss loss;
  config::LossNormalization loss_normalization;
  double stop_pos_weight;
  double guided_attention_weight;
  double guided_attention_sigma;
};
// train.loss, loss_normalization, stop_pos_weight, guided_attention_weight and _sigma.
// loss_options({}) gives the config's defaults.
LossOptions loss_options(const config::TrainOptions& train);

// Each part is a scalar; parts that are off are undefined tensors. `frames` is the sum of the
// frame parts (mel, mel_postnet, gate, linear); `total` adds the guided attention part scaled by
// its weight.
struct LossParts {
  torch::Tensor total, frames, mel, mel_postnet, gate, linear, guided_attention;
};

// Padded frames contribute no error, whatever the outputs or targets hold there. Under
// train.loss_normalization real_frames every frame part is averaged over the valid (frame <
// mel_length) elements of the batch; under padded_batch it is that error summed and divided by
// every element of the padded batch (B x T x C, as NVIDIA's Tacotron2Loss: MSELoss and
// BCEWithLogitsLoss of its masked outputs against zero-padded targets). The guided attention
// part averages over valid (decoder step, text position) pairs and is reported unweighted.
LossParts compute_loss(const TacotronOutput& out, const Targets& targets,
                       const torch::Tensor& text_lengths, const LossOptions& options);

// The objective one rank back-propagates: the frame parts scaled by `frame_weight` plus the
// guided attention part, with its train.guided_attention_weight, scaled by `pair_weight`. The
// weights make the ranks' reduced gradient that of the global batch's loss (Note [Exact global
// batch], models/tacotron2/training/teacher_forced.h: global_batch_weights).
// Undefined weights are 1.
torch::Tensor weighted_total(const LossParts& parts, const torch::Tensor& frame_weight,
                             const torch::Tensor& pair_weight, const LossOptions& options);
torch::Tensor weighted_total(const LossParts& parts, double frame_weight, double pair_weight,
                             const LossOptions& options);

// Guided attention penalty W[b, n, t] = 1 - exp(-(n/N_b - t/T_b)^2 / (2 sigma^2)) for decoder
// steps n < N_b and text positions t < T_b, 0 elsewhere. decoder_lengths, text_lengths int64 [B].
// Returns [B, max_steps, max_text].
torch::Tensor guided_attention_weights(const torch::Tensor& decoder_lengths,
                                       const torch::Tensor& text_lengths, int64_t max_steps,
                                       int64_t max_text, double sigma);

}  // namespace tts::tacotron2
