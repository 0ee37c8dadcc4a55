// What HiFi-GAN registers (models/registry.h): training, bench and inspect, and its roles after
// training: vocoder, jik876's files, forward.
#include "tts/models/hifigan/layers/parameter_count.h"
#include "tts/models/hifigan/training/family.h"
#include "tts/models/vocoder_entry.h"
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
  return models::vocoder_entry(
      {make_family, summarize_checkpoint, make_bench,
       [](const config::Config& config) { return parameter_count(config); }, kSizingKeys,
       load_vocoder, jik876_converter(), forward_role(), run_contents()});
}

}  // namespace tts::hifigan
