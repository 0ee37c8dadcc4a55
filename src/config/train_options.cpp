#include "tts/config/train_options.h"

#include <algorithm>

#include "tts/models/family_sections.h"

namespace tts::config {
namespace {
constexpr const char* kBatchWhy = "NVIDIA's batch is 64 utterances";
}  // namespace

void TrainOptions::validate() const {
  require(batch_size >= 1, "train.batch_size", batch_size, "must be at least 1");
  require_at_most("train.batch_size", batch_size, kMaxBatchSize, kBatchWhy);
  require(accumulate >= 1, "train.accumulate", accumulate, "must be at least 1");
  require_at_most("train.accumulate", accumulate, kMaxAccumulate, "1 to 8 in practice");
  require(max_steps >= 0, "train.max_steps", max_steps, "must be >= 0 (0 = no limit)");
  require(max_epochs >= 1, "train.max_epochs", max_epochs, "must be at least 1");
  require(learning_rate > 0, "train.learning_rate", learning_rate, "must be > 0");
  require(lr_decay_start >= 0, "train.lr_decay_start", lr_decay_start, "must be >= 0");
  require(lr_decay_steps >= 1, "train.lr_decay_steps", lr_decay_steps, "must be at least 1");
  require(lr_decay_rate > 0 && lr_decay_rate <= 1, "train.lr_decay_rate", lr_decay_rate,
          "must be in (0, 1]");
  require(lr_min >= 0 && lr_min <= learning_rate, "train.lr_min", lr_min,
          fmt::format("must be in [0, train.learning_rate ({})]", learning_rate));
  require(warmup_steps >= 1, "train.warmup_steps", warmup_steps, "must be at least 1");
  require(weight_decay >= 0, "train.weight_decay", weight_decay, "must be >= 0");
  require(adam_beta1 >= 0 && adam_beta1 < 1, "train.adam_beta1", adam_beta1, "must be in [0, 1)");
  require(adam_beta2 >= 0 && adam_beta2 < 1, "train.adam_beta2", adam_beta2, "must be in [0, 1)");
  require(adam_eps > 0, "train.adam_eps", adam_eps, "must be > 0");
  require(grad_clip_thresh >= 0, "train.grad_clip_thresh", grad_clip_thresh,
          "must be >= 0 (0 = no clipping)");
  require(stop_pos_weight > 0, "train.stop_pos_weight", stop_pos_weight, "must be > 0");
  require(guided_attention_sigma > 0, "train.guided_attention_sigma", guided_attention_sigma,
          "must be > 0");
  require(guided_attention_weight >= 0, "train.guided_attention_weight", guided_attention_weight,
          "must be >= 0 (0 = off)");
  require(log_interval >= 1, "train.log_interval", log_interval, "must be at least 1");
  require(val_interval >= 1, "train.val_interval", val_interval, "must be at least 1");
  require(checkpoint_interval >= 1, "train.checkpoint_interval", checkpoint_interval,
          "must be at least 1");
  require(keep_checkpoints >= 1, "train.keep_checkpoints", keep_checkpoints, "must be at least 1");
  require(val_inference_utterances >= 0, "train.val_inference_utterances", val_inference_utterances,
          "must be >= 0");
  require_at_most("train.val_inference_utterances", val_inference_utterances,
                  kMaxValInferenceUtterances, "a handful show how validation sounds");
  require(max_bad_steps >= 1, "train.max_bad_steps", max_bad_steps, "must be at least 1");
  require(early_stopping >= 0, "train.early_stopping", early_stopping,
          "must be >= 0 (validations without improvement; 0 = off)");
  for (const std::string& part : freeze) {
    require(!part.empty() && part.front() != '.' && part.back() != '.', "train.freeze",
            fmt::format("'{}'", part),
            "each entry must be a parameter-name prefix such as encoder or decoder.attention");
  }
  require(length_buckets >= 0, "train.length_buckets", length_buckets,
          "must be >= 0 (buckets of batch lengths; 0 = off)");
  require_at_most("train.length_buckets", length_buckets, kMaxLengthBuckets,
                  "a handful of shapes is the point");
  require(!cuda_graphs || length_buckets > 0, "train.cuda_graphs", cuda_graphs,
          "a CUDA graph replays one batch shape: set train.length_buckets (e.g. 8) as well, or "
          "train.cuda_graphs: false");
  require(!cuda_graphs || device != Device::kCpu, "train.cuda_graphs", cuda_graphs,
          "CUDA graphs run on a CUDA device: set train.device: cuda (or auto on a GPU machine), "
          "or train.cuda_graphs: false");
  require(!cuda_graphs || accumulate == 1, "train.cuda_graphs", cuda_graphs,
          fmt::format("a captured iteration is one micro-batch, but train.accumulate is {}: set "
                      "train.accumulate: 1 (a larger train.batch_size instead), or "
                      "train.cuda_graphs: false",
                      accumulate));
  for (size_t i = 0; i < r_schedule.size(); ++i) {
    const RScheduleRow& row = r_schedule[i];
    std::string where = fmt::format("row {} [{}, {}, {}]", i, row.from_step, row.r, row.batch_size);
    require(i > 0 || row.from_step == 0, "train.r_schedule", where,
            "the first row must start at step 0");
    require(i == 0 || row.from_step > r_schedule[i - 1].from_step, "train.r_schedule", where,
            "from_step must increase from row to row");
    require(row.r >= 1 && row.batch_size >= 1, "train.r_schedule", where,
            "r and batch_size must be at least 1");
    require(row.r <= kMaxFramesPerStep && row.batch_size <= kMaxBatchSize, "train.r_schedule",
            where,
            fmt::format("r must be at most {} and batch_size at most {} (the numbers size memory)",
                        kMaxFramesPerStep, kMaxBatchSize));
  }
}

int TrainOptions::max_scheduled_r() const {
  int r = 0;
  for (const RScheduleRow& row : r_schedule) r = std::max(r, row.r);
  return r;
}

}  // namespace tts::config
