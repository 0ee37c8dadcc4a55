#include "tts/models/registry.h"

#include "tts/core/error.h"
#include "tts/models/hifigan/family.h"
#include "tts/models/tacotron2/family.h"
#include "tts/models/wavenet/family.h"

namespace tts::models {

const FamilyEntry& family(config::ModelKind kind) {
  static const FamilyEntry kTacotron2{tacotron2::make_family, tacotron2::summarize_checkpoint,
                                      tacotron2::make_bench};
  static const FamilyEntry kHifigan{hifigan::make_family, hifigan::summarize_checkpoint,
                                    hifigan::make_bench};
  static const FamilyEntry kWavenet{wavenet::make_family, wavenet::summarize_checkpoint,
                                    wavenet::make_bench};
  switch (kind) {
    case config::ModelKind::kTacotron2:
      return kTacotron2;
    case config::ModelKind::kHifigan:
      return kHifigan;
    case config::ModelKind::kWavenet:
      return kWavenet;
  }
  throw Error(fmt::format("model.kind {}: no family is registered for it", kind));
}

}  // namespace tts::models
