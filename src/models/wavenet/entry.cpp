// What WaveNet registers (models/registry.h): training, bench and inspect, and its roles after
// training: vocoder, r9y9's files, forward.
#include "tts/models/parameter_budget.h"
#include "tts/models/vocoder_validation.h"
#include "tts/models/wavenet/family.h"
#include "tts/models/wavenet/parameter_count.h"

namespace tts::wavenet {

models::FamilyEntry entry() {
  models::FamilyEntry entry;
  entry.make = make_family;
  entry.summarize_checkpoint = summarize_checkpoint;
  entry.bench = make_bench;
  // The networks' size from the config, against the budget and the weights the file holds.
  entry.check_size = [](const config::Config& config, int64_t stored_values,
                        const std::string& source) {
    models::require_checkpoint_holds(parameter_count(config), stored_values, source, kSizingKeys);
  };
  entry.load_vocoder = load_vocoder;
  entry.converters = {r9y9_converter()};
  entry.forward = forward_role();
  // One optimizer on r9y9's mixture negative log-likelihood, validated on held-out windows.
  entry.report = models::vocoder_run_contents("WaveNet");
  entry.report.loss = "training loss (mixture NLL per sample)";
  entry.report.validation_loss = "validation NLL per sample";
  entry.report.optimizers = {"model"};
  return entry;
}

}  // namespace tts::wavenet
