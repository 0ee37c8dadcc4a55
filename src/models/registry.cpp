#include "tts/models/registry.h"

#include "tts/core/error.h"
#include "tts/models/tacotron2/family.h"

namespace tts::models {

train::FamilyFactory family_factory(config::ModelKind kind) {
  switch (kind) {
    case config::ModelKind::kTacotron2:
      return tacotron2::make_family;
  }
  throw Error(fmt::format("model.kind {}: no family is registered for it", kind));
}

}  // namespace tts::models
