// What a vocoder family's validation leaves beside its "val" record (HiFi-GAN, WaveNet): rank 0's
// sample — one validation utterance, real and generated — written after the step's checkpoint as
// samples/step_N.wav and step_N_real.wav (logging.samples), plots/step_N_mel.png (the stored
// input mel above the mel of the generated audio, made as the store's were; logging.plots) and
// TensorBoard's val/audio, val/audio_real and val/mel.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tts/config/config.h"
#include "tts/report/run_report.h"
#include "tts/train/family.h"

namespace tts::dist {
class Communicator;
}  // namespace tts::dist

namespace tts::models {

// The validation utterances rank `rank` of `world` scores: every world-th from its rank, or all of
// them when there are fewer utterances than ranks (each rank then validates the whole set).
std::vector<size_t> validation_share(size_t utterances, int rank, int world);

// The mean over all ranks of a per-item score each rank summed (`sum` over `count` items) for its
// validation_share: {mean, items}. Collective.
std::pair<double, double> mean_over_ranks(dist::Communicator& comm, size_t utterances, double sum,
                                          double count);

// What the run report shows of every vocoder's run (VocoderValidation's files: the mel plot, the
// generated and the real audio); `family` names it.
report::RunContents vocoder_run_contents(const std::string& family);

struct VocoderSample {
  std::string id;
  std::vector<float> real;       // the stored (trimmed) waveform
  std::vector<float> generated;  // what the vocoder made of its mel
  torch::Tensor stored_mel;      // [frames, n_mels], the vocoder's input
};

class VocoderValidation final : public train::ValidationOutcome {
 public:
  VocoderValidation(const config::Config& config, std::string run_dir, int64_t step,
                    std::optional<VocoderSample> sample)
      : config_(config), run_dir_(std::move(run_dir)), step_(step), sample_(std::move(sample)) {}

  void write_artifacts(train::MetricSink& metrics) override;

 private:
  const config::Config& config_;
  std::string run_dir_;
  int64_t step_;
  std::optional<VocoderSample> sample_;
};

}  // namespace tts::models
