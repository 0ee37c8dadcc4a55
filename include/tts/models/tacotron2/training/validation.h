// Validation of a run, in two parts:
//  - run(): the teacher-forced loss and alignment scores over the validation set (every rank,
//    averaged over the ranks) and, on rank 0, a free-running synthesis of the first validation
//    utterances with its alignment scores, whether the stop token fired and how long it ran. It
//    writes the "val" metrics record and the log line. What the checkpoint stores.
//  - write_artifacts(): rank 0's optional work: the alignment and mel plots, the audio sample and
//    their TensorBoard images and audio. Called after the step's checkpoint is written; every
//    failure in it is a warning (side work never ends a run).
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "tts/config/config.h"
#include "tts/data/batch.h"
#include "tts/models/tacotron2/layers/network.h"
#include "tts/models/tacotron2/training/loss.h"
#include "tts/train/metrics.h"

namespace tts::data {
class Loader;
}
namespace tts::dist {
class Communicator;
}

namespace tts::tacotron2 {

struct ValidationResult {
  int64_t step = 0;
  // "val" record: loss, diagonal_score, focus_rate and, when free-running ran,
  // infer_diagonal_score, infer_focus_rate, infer_stop_fired, infer_max_steps_hit,
  // infer_frame_ratio. Rank 0 only.
  train::MetricRecord record{"val", {}};
  // Rank 0: what the plots and the sample are drawn from (absent without validation data).
  std::optional<data::Batch> first;
  tacotron2::TacotronOutput first_output;  // teacher-forced output of `first`
  tacotron2::TacotronOutput inferred;      // free-running output of its first utterances, or empty
};

class Validator {
 public:
  // `run_dir` receives plots/ and samples/ (rank 0 only).
  Validator(const config::Config& config, torch::Device device, dist::Communicator& comm,
            std::string run_dir);

  // Collective: every rank calls it after the same step. `loader` yields this rank's share of
  // the validation set, collated for the model's r (the phase in force).
  // `metrics` is rank 0's sink (nullptr on the other ranks). Leaves the model in eval mode and
  // the default CPU generator's state as it found it, so that when and how often a run validates
  // does not change its parameters.
  ValidationResult run(tacotron2::Tacotron2Impl& model, data::Loader& loader, int64_t step,
                       train::MetricSink* metrics);

  // Rank 0, after the checkpoint: plots, the audio sample and their TensorBoard entries.
  void write_artifacts(const ValidationResult& result, train::MetricSink& metrics);

 private:
  // Rank 0: free-running synthesis of the first utterances of `first`; adds its scores to
  // `result.record`. A failure is a warning.
  void run_free(tacotron2::Tacotron2Impl& model, ValidationResult& result);

  const config::Config& config_;
  torch::Device device_;
  dist::Communicator& comm_;
  std::string run_dir_;
};

}  // namespace tts::tacotron2
