// What HiFi-GAN registers (models/registry.h): training, bench and inspect, and its roles after
// training: vocoder, jik876's files, forward.
#include "tts/models/hifigan/family.h"
#include "tts/models/hifigan/parameter_count.h"
#include "tts/models/parameter_budget.h"
#include "tts/models/vocoder_validation.h"
#include "tts/report/metric_names.h"

namespace tts::hifigan {
namespace {

// Its two updates' losses and optimizers, and the mel L1 it validates with.
report::RunContents run_contents() {
  namespace metric = report::metric;
  report::RunContents contents = models::vocoder_run_contents("HiFi-GAN");
  contents.loss = "generator loss";
  contents.validation_loss = "validation mel L1";
  contents.optimizers = {"discriminator", "generator"};
  contents.summary = {{"discriminator loss", metric::kTrain, "discriminator_loss", "{:.4f}"},
                      {"mel L1 (training)", metric::kTrain, "mel_l1", "{:.4f}"}};
  contents.charts = {{"Mel L1: training and validation",
                      "mel_l1",
                      {{"mel L1, training", metric::kTrain, "mel_l1"},
                       {"mel L1, validation", metric::kVal, "mel_l1", true}},
                      "mel L1"}};
  return contents;
}

}  // namespace

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
  entry.converters = {jik876_converter()};
  entry.forward = forward_role();
  entry.report = run_contents();
  return entry;
}

}  // namespace tts::hifigan
