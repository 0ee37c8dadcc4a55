#include "tts/models/tacotron2/training/loss.h"

#include <torch/torch.h>

#include <algorithm>

#include "tts/core/error.h"
#include "tts/models/tacotron2/layers/layers.h"
#include "tts/models/tacotron2/training/precision.h"

namespace tts::tacotron2 {
namespace {

// Mean of `error` [B, T, C] where `valid` [B, T, 1] is 1: over the valid elements
// (real_frames), or their sum over every element of the padded batch, B x T x C (padded_batch:
// NVIDIA's masked outputs and padded targets make the padded elements' error 0, but they count).
torch::Tensor masked_mean(const torch::Tensor& error, const torch::Tensor& valid,
                          bool over_padded_batch) {
  torch::Tensor sum = (error * valid).sum();
  if (over_padded_batch) return sum / static_cast<double>(std::max<int64_t>(error.numel(), 1));
  return sum / (valid.sum() * error.size(2)).clamp_min(1);
}

torch::Tensor spectrogram_loss(const torch::Tensor& prediction, const torch::Tensor& target,
                               const torch::Tensor& valid, bool l1, bool over_padded_batch) {
  torch::Tensor diff = prediction - target;
  return masked_mean(l1 ? diff.abs() : diff.square(), valid, over_padded_batch);
}

void check_same_shape(const torch::Tensor& prediction, const torch::Tensor& target,
                      const char* what) {
  TTS_CHECK(target.defined() && prediction.sizes() == target.sizes(),
            "compute_loss: {} target {} does not match the model output {} (targets must be "
            "padded to the same number of frames, a multiple of r)",
            what, target.defined() ? c10::str(target.sizes()) : "undefined",
            c10::str(prediction.sizes()));
}

}  // namespace

torch::Tensor guided_attention_weights(const torch::Tensor& decoder_lengths,
                                       const torch::Tensor& text_lengths, int64_t max_steps,
                                       int64_t max_text, double sigma) {
  auto options = torch::TensorOptions().dtype(torch::kFloat32).device(decoder_lengths.device());
  torch::Tensor n = torch::arange(max_steps, options).view({1, -1, 1});
  torch::Tensor t = torch::arange(max_text, options).view({1, 1, -1});
  torch::Tensor steps = decoder_lengths.to(options).view({-1, 1, 1});
  torch::Tensor texts = text_lengths.to(options).view({-1, 1, 1});
  torch::Tensor w = 1 - torch::exp(-(n / steps - t / texts).square() / (2 * sigma * sigma));
  torch::Tensor valid = padding_mask(decoder_lengths, max_steps).logical_not().unsqueeze(2) &
                        padding_mask(text_lengths, max_text).logical_not().unsqueeze(1);
  return w * valid.to(options);
}

LossOptions loss_options(const config::TrainOptions& train) {
  return {train.loss, train.loss_normalization, train.stop_pos_weight,
          train.guided_attention_weight, train.guided_attention_sigma};
}

LossParts compute_loss(const TacotronOutput& output, const Targets& targets,
                       const torch::Tensor& text_lengths, const LossOptions& options) {
  const TacotronOutput out = at_least_float(output);  // fp32 losses after a bf16 forward
  check_same_shape(out.mel, targets.mel, "mel");
  check_same_shape(out.gate, targets.stop, "stop");
  const bool l1 = options.loss == config::MelLoss::kL1;
  const bool padded = options.loss_normalization == config::LossNormalization::kPaddedBatch;
  int64_t frames = out.mel.size(1);
  torch::Tensor valid = padding_mask(targets.mel_lengths, frames)
                            .logical_not()
                            .to(out.mel.dtype())
                            .unsqueeze(2);  // [B, T, 1]
  LossParts parts;
  parts.mel = spectrogram_loss(out.mel, targets.mel, valid, l1, padded);
  parts.mel_postnet = spectrogram_loss(out.mel_postnet, targets.mel, valid, l1, padded);
  torch::Tensor pos_weight = torch::full({1}, options.stop_pos_weight, out.gate.options());
  torch::Tensor gate_error = torch::binary_cross_entropy_with_logits(
      out.gate, targets.stop.to(out.gate.dtype()), {}, pos_weight, at::Reduction::None);
  parts.gate = masked_mean(gate_error.unsqueeze(2), valid, padded);
  parts.frames = parts.mel + parts.mel_postnet + parts.gate;
  if (out.linear.defined()) {
    check_same_shape(out.linear, targets.linear, "linear");
    parts.linear = spectrogram_loss(out.linear, targets.linear, valid, l1, padded);
    parts.frames = parts.frames + parts.linear;
  }
  parts.total = parts.frames;
  if (options.guided_attention_weight > 0) {
    torch::Tensor decoder_lengths = decoder_steps(targets.mel_lengths, out.r);
    torch::Tensor w =
        guided_attention_weights(decoder_lengths, text_lengths, out.alignments.size(1),
                                 out.alignments.size(2), options.guided_attention_sigma)
            .to(out.alignments.dtype());
    torch::Tensor pairs = (decoder_lengths * text_lengths.to(decoder_lengths.device()))
                              .sum()
                              .to(out.alignments.dtype());
    parts.guided_attention = (out.alignments * w).sum() / pairs.clamp_min(1);
    parts.total = parts.total + options.guided_attention_weight * parts.guided_attention;
  }
  return parts;
}

torch::Tensor weighted_total(const LossParts& parts, const torch::Tensor& frame_weight,
                             const torch::Tensor& pair_weight, const LossOptions& options) {
  // A weight tensor multiplies in float64 and is rounded once to x's dtype, forward and backward
  // (the gradient reaching x too), as a double scalar does on libtorch 1.13 (2.x rounds the scalar
  // to float first: 1 ulp apart at most): a batch's device counts give the loss and its dtype that
  // host counts gave, and the same gradients on every libtorch.
  auto weighted = [](const torch::Tensor& x, const torch::Tensor& w) {
    return (x.to(torch::kFloat64) * w).to(x.scalar_type());
  };
  torch::Tensor total =
      frame_weight.defined() ? weighted(parts.frames, frame_weight) : parts.frames;
  if (parts.guided_attention.defined()) {
    const torch::Tensor& attention = parts.guided_attention;
    total = total + (pair_weight.defined()
                         ? weighted(attention, pair_weight * options.guided_attention_weight)
                         : attention * options.guided_attention_weight);
  }
  return total;
}

torch::Tensor weighted_total(const LossParts& parts, double frame_weight, double pair_weight,
                             const LossOptions& options) {
  return weighted_total(parts, torch::scalar_tensor(frame_weight, torch::kFloat64),
                        torch::scalar_tensor(pair_weight, torch::kFloat64), options);
}

}  // namespace tts::tacotron2
