#include "tts/models/tacotron2/training/teacher_forced.h"

#include "tts/core/error.h"
#include "tts/models/tacotron2/training/precision.h"
#include "tts/report/metric_names.h"

namespace tts::tacotron2 {

tacotron2::LossParts forward_loss(tacotron2::Tacotron2Impl& model, const data::Batch& batch,
                                  const config::TrainOptions& train,
                                  tacotron2::TacotronOutput* output, const BatchContext& context) {
  *output =
      tacotron2::forward_in_precision(model, batch.text, batch.text_lengths, batch.mel,
                                      batch.mel_lengths, train.precision, context, batch.speakers);
  tacotron2::Targets targets{batch.mel, batch.mel_lengths, batch.stop, batch.linear};
  return tacotron2::compute_loss(*output, targets, batch.text_lengths,
                                 tacotron2::loss_options(train));
}

BatchContext training_context(const data::Batch& batch, const models::KeyedDropout& dropout,
                              const config::TrainOptions& train, dist::Communicator& comm) {
  TTS_CHECK(dropout.rows() == batch.size() &&
                static_cast<int64_t>(batch.text_length_values.size()) == batch.size() &&
                static_cast<int64_t>(batch.mel_length_values.size()) == batch.size(),
            "train: a batch of {} utterances without its lengths on the host, or with the streams "
            "of {} (not made by data::collate)",
            batch.size(), dropout.rows());
  BatchContext context;
  context.dropout = &dropout;
  context.text_lengths = batch.text_length_values;
  context.mel_lengths = batch.mel_length_values;
  if (train.batch_norm == config::BatchNormStatistics::kGlobal) context.batch_norm = &comm;
  return context;
}

std::vector<std::string> settings_that_break_the_promises(const config::Config& config) {
  const config::TrainOptions& train = config.train;
  std::vector<std::string> broken;
  if (train.loss_normalization == config::LossNormalization::kPaddedBatch) {
    broken.push_back(
        "train.loss_normalization=padded_batch: each rank's losses are means over its own padded "
        "batch, so an utterance's weight depends on the rank and the batch it lands in");
  }
  if (train.batch_norm == config::BatchNormStatistics::kPerRank && !train.freeze_batch_norm) {
    broken.push_back(
        "train.batch_norm=per_rank: BatchNorm normalizes by each rank's own padded batch");
  }
  if (!config.model.zero_padding_in_convolutions) {
    broken.push_back(
        "model.zero_padding_in_convolutions=false: the convolutions see each batch's padding");
  }
  if (config.model.recurrent_products == config::RecurrentProducts::kFastest) {
    broken.push_back(
        "model.recurrent_products=fastest: each process times its own product path, so ranks and "
        "a resumed process may round differently");
  }
  if (train.precision == config::Precision::kBf16) {
    broken.push_back(
        "train.precision=bf16: the ranks' sums round in bf16, far above fp32's rounding");
  }
  return broken;
}

LossWeights global_batch_weights(const data::Batch& batch, int world_size,
                                 config::LossNormalization normalization) {
  LossWeights weights;
  if (world_size == 1) return weights;
  TTS_CHECK(batch.global_real_frames > 0 && batch.global_attention_pairs > 0,
            "train: a batch without its global batch's counts (not from the loader's plan)");
  // [4]: real frames, attention pairs, and the global batch's (data::Batch::counts' order).
  const torch::Tensor counts =
      (batch.counts.defined()
           ? batch.counts
           : torch::tensor({batch.real_frame_count, batch.attention_pair_count,
                            batch.global_real_frames, batch.global_attention_pairs},
                           torch::kInt64))
          .to(torch::kFloat64);
  const double world = static_cast<double>(world_size);
  if (normalization == config::LossNormalization::kRealFrames) {
    weights.frames = counts[0] * world / counts[2];
  }
  weights.attention_pairs = counts[1] * world / counts[3];
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
