// What WaveNet registers (models/registry.h): training, bench and inspect, and its roles after
// training: vocoder, r9y9's files, forward.
#include "tts/models/vocoder_entry.h"
#include "tts/models/vocoder_validation.h"
#include "tts/models/wavenet/layers/parameter_count.h"
#include "tts/models/wavenet/training/family.h"

namespace tts::wavenet {
namespace {

// One optimizer on r9y9's mixture negative log-likelihood, validated on held-out windows.
report::RunContents run_contents() {
  report::RunContents contents = models::vocoder_run_contents("WaveNet");
  contents.loss = "training loss (mixture NLL per sample)";
  contents.validation_loss = "validation NLL per sample";
  contents.optimizers = {"model"};
  return contents;
}

}  // namespace

models::FamilyEntry entry() {
  return models::vocoder_entry(
      {make_family, summarize_checkpoint, make_bench,
       [](const config::Config& config) { return parameter_count(config); }, kSizingKeys,
       load_vocoder, r9y9_converter(), forward_role(), run_contents()});
}

}  // namespace tts::wavenet
