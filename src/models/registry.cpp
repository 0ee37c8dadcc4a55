#include "tts/models/registry.h"

#include "tts/core/error.h"
#include "tts/models/tacotron2/family.h"

namespace tts::models {

const FamilyEntry& family(config::ModelKind kind) {
  static const FamilyEntry kTacotron2{tacotron2::make_family, tacotron2::summarize_checkpoint};
  switch (kind) {
    case config::ModelKind::kTacotron2:
      return kTacotron2;
  }
  throw Error(fmt::format("model.kind {}: no family is registered for it", kind));
}

}  // namespace tts::models
