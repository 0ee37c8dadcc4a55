// model.kind and what the torch-free modules below the families (config, data) know of each
// family: its name, its config sections, the rules it sets on the rest of the config, and what its
// training reads of a feature store. The torch-free half of the registry: the other half,
// models/registry.h, gives each family's training, inference, conversion and forward.
//
// Adding a family: its options header in its folder, a ModelKind name and (when it has a section
// of its own) a member of FamilySections here, its rules in validate_family() and its needs in
// store_needs() (src/models/family_sections.cpp), and one line in src/models/registry.cpp.
#pragma once

#include "tts/config/audio_options.h"
#include "tts/config/field.h"
#include "tts/config/train_options.h"
#include "tts/models/hifigan/options.h"
#include "tts/models/tacotron2/options.h"
#include "tts/models/wavenet/options.h"

namespace tts::config {

// The model family a run trains (train/family.h; one registration each in
// src/models/registry.cpp).
enum class ModelKind { kTacotron2, kHifigan, kWavenet };
TTS_CHOICE_NAMES(ModelKind, {ModelKind::kTacotron2, "tacotron2"}, {ModelKind::kHifigan, "hifigan"},
                 {ModelKind::kWavenet, "wavenet"});

// Config section `model`: which family, then Tacotron-2's fields (the section held Tacotron-2
// alone before the vocoders came, and users' configs keep it so).
struct ModelOptions : Tacotron2Options {
  ModelKind kind = ModelKind::kTacotron2;

  template <class V>
  void visit(V& v) {
    v("kind", kind,
      "the model family: tacotron2 (the fields below), hifigan (section hifigan) or wavenet "
      "(section wavenet)");
    Tacotron2Options::visit(v);
  }
};

// The sections of the families that have one of their own, in the config's order (after
// `model`). Config derives from it: config.hifigan, config.wavenet.
struct FamilySections {
  HifiganOptions hifigan;
  WavenetOptions wavenet;

  template <class V>
  void visit_family_sections(V& v) {
    v.section("hifigan", hifigan);
    v.section("wavenet", wavenet);
  }
};

// Every family section's own rules, then the rules the family `model.kind` names sets on the
// other sections (a vocoder's upsampling against audio.hop_length, the precisions it trains in).
// Throws UsageError with the key path.
void validate_families(const ModelOptions& model, const FamilySections& sections,
                       const AudioOptions& audio, const TrainOptions& train);

// What a family's training reads of a feature store: the utterances' text (symbol ids) and the
// waveforms of their mels (a store keeps them only with audio.waveforms).
struct StoreNeeds {
  bool text = true;
  bool waveforms = false;
};
StoreNeeds store_needs(ModelKind kind);

}  // namespace tts::config
