#include "tts/models/tacotron2/forward.h"

#include "tts/core/error.h"
#include "tts/models/tacotron2/precision.h"
#include "tts/report/metric_names.h"

namespace tts::tacotron2 {

tacotron2::LossParts forward_loss(tacotron2::Tacotron2Impl& model, const data::Batch& batch,
                                  const config::TrainOptions& train,
                                  tacotron2::TacotronOutput* output) {
  *output = tacotron2::forward_in_precision(model, batch.text, batch.text_lengths, batch.mel,
                                            batch.mel_lengths, train.precision);
  tacotron2::Targets targets{batch.mel, batch.mel_lengths, batch.stop, batch.linear};
  return tacotron2::compute_loss(*output, targets, batch.text_lengths,
                                 tacotron2::loss_options(train));
}

LossWeights global_batch_weights(const data::Batch& batch, int world_size,
                                 config::LossNormalization normalization) {
  LossWeights weights;
  if (world_size == 1) return weights;
  TTS_CHECK(batch.global_real_frames > 0 && batch.global_attention_pairs > 0,
            "train: a batch without its global batch's counts (not from the loader's plan)");
  const double world = static_cast<double>(world_size);
  if (normalization == config::LossNormalization::kRealFrames) {
    weights.frames = static_cast<double>(batch.real_frames()) * world /
                     static_cast<double>(batch.global_real_frames);
  }
  weights.attention_pairs = static_cast<double>(batch.attention_pair_count) * world /
                            static_cast<double>(batch.global_attention_pairs);
  return weights;
}

torch::Tensor training_loss(const tacotron2::LossParts& parts, const data::Batch& batch,
                            int world_size, const config::TrainOptions& train) {
  const LossWeights weights = global_batch_weights(batch, world_size, train.loss_normalization);
  return tacotron2::weighted_total(parts, weights.frames, weights.attention_pairs,
                                   tacotron2::loss_options(train));
}

void add_losses(train::LossSums& sums, const tacotron2::LossParts& parts) {
  sums.add(report::metric::kLoss, parts.total);
  sums.add("mel_loss", parts.mel);
  sums.add("postnet_loss", parts.mel_postnet);
  sums.add("gate_loss", parts.gate);
  sums.add("linear_loss", parts.linear);
  sums.add("guided_attention_loss", parts.guided_attention);
}

}  // namespace tts::tacotron2
