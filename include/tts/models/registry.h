// model.kind -> the family that trains it (train/family.h). Adding a model family is one folder,
// src/models/<kind>/ (with include/tts/models/<kind>/), a ModelKind name in
// config/model_options.h, and one line in registry.cpp.
#pragma once

#include "tts/config/model_options.h"
#include "tts/train/family.h"

namespace tts::models {

train::FamilyFactory family_factory(config::ModelKind kind);

}  // namespace tts::models
