#include "tts/models/family_sections.h"

#include "tts/models/vocoder_options.h"

namespace tts::config {

void validate_families(const ModelOptions& model, const FamilySections& sections,
                       const AudioOptions& audio, const TrainOptions& train) {
  model.validate();
  sections.hifigan.validate();
  sections.wavenet.validate();
  switch (model.kind) {
    case ModelKind::kTacotron2:
      return;
    case ModelKind::kHifigan:
      validate_vocoder("hifigan", "hifigan.upsample_rates", sections.hifigan.upsample_rates,
                       "hifigan.segment_size", sections.hifigan.segment_size, audio, train);
      return;
    case ModelKind::kWavenet:
      validate_vocoder("wavenet", "wavenet.upsample_scales", sections.wavenet.upsample_scales,
                       "wavenet.max_time_steps", sections.wavenet.max_time_steps, audio, train);
      return;
  }
}

StoreNeeds store_needs(ModelKind kind) {
  switch (kind) {
    case ModelKind::kTacotron2:
      return {/*text=*/true, /*waveforms=*/false};
    case ModelKind::kHifigan:
    case ModelKind::kWavenet:
      return {/*text=*/false, /*waveforms=*/true};
  }
  return {};
}

}  // namespace tts::config
