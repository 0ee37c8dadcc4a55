// Validation of a run: the teacher-forced loss over the validation set (every rank, averaged over
// the ranks) and, on rank 0, what a person looks at: the alignment plot of the first validation
// utterance, a free-running mel plot and an audio sample, the "val" metrics record and the
// TensorBoard image.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>

#include "tts/config/config.h"
#include "tts/data/batch.h"
#include "tts/model/loss.h"
#include "tts/model/tacotron2.h"
#include "tts/train/metrics.h"

namespace tts::data {
class Loader;
}
namespace tts::dist {
class Communicator;
}

namespace tts::train {

// The teacher-forced forward pass of `batch` and its loss (training and validation share it).
model::LossParts forward_loss(model::Tacotron2Impl& model, const data::Batch& batch,
                              const config::TrainOptions& train, model::TacotronOutput* output);

class Validator {
 public:
  // `loader` yields this rank's share of the validation set; `run_dir` receives plots/ and
  // samples/ (rank 0 only).
  Validator(const config::Config& config, data::Loader& loader, torch::Device device,
            dist::Communicator& comm, std::string run_dir);

  // Collective: every rank calls it after the same step. `metrics` is rank 0's sink (nullptr on
  // the other ranks). Leaves the model in eval mode and the default CPU generator's state as it
  // found it, so that when and how often a run validates does not change its parameters.
  void run(model::Tacotron2Impl& model, int64_t step, MetricSink* metrics);

 private:
  // Rank 0: plots, the free-running sample and the TensorBoard image of the first batch.
  void write_artifacts(model::Tacotron2Impl& model, const data::Batch& first,
                       const model::TacotronOutput& first_output, int64_t step,
                       MetricSink& metrics);

  const config::Config& config_;
  data::Loader& loader_;
  torch::Device device_;
  dist::Communicator& comm_;
  std::string run_dir_;
};

}  // namespace tts::train
