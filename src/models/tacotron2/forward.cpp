#include "tts/models/tacotron2/forward.h"

#include "tts/core/error.h"
#include "tts/model/precision.h"
#include "tts/report/metric_names.h"

namespace tts::tacotron2 {

model::LossParts forward_loss(model::Tacotron2Impl& model, const data::Batch& batch,
                              const config::TrainOptions& train, model::TacotronOutput* output) {
  *output = model::forward_in_precision(model, batch.text, batch.text_lengths, batch.mel,
                                        batch.mel_lengths, train.precision);
  model::Targets targets{batch.mel, batch.mel_lengths, batch.stop, batch.linear};
  return model::compute_loss(*output, targets, batch.text_lengths, model::loss_options(train));
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

torch::Tensor training_loss(const model::LossParts& parts, const data::Batch& batch, int world_size,
                            const config::TrainOptions& train) {
  const LossWeights weights = global_batch_weights(batch, world_size, train.loss_normalization);
  return model::weighted_total(parts, weights.frames, weights.attention_pairs,
                               model::loss_options(train));
}

void add_losses(train::LossSums& sums, const model::LossParts& parts) {
  sums.add(report::metric::kLoss, parts.total);
  sums.add("mel_loss", parts.mel);
  sums.add("postnet_loss", parts.mel_postnet);
  sums.add("gate_loss", parts.gate);
  sums.add("linear_loss", parts.linear);
  sums.add("guided_attention_loss", parts.guided_attention);
}

}  // namespace tts::tacotron2
