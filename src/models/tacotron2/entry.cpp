// What Tacotron-2 registers (models/registry.h): training, bench and inspect, its ceilings, and
// its roles after training: acoustic model, NVIDIA's files, forward.
#include "tts/models/tacotron2/layers/network.h"
#include "tts/models/tacotron2/speaking/gta.h"
#include "tts/models/tacotron2/speaking/speech_decoder.h"
#include "tts/models/tacotron2/speaking/synthesize.h"
#include "tts/models/tacotron2/training/family.h"
#include "tts/report/metric_names.h"
#include "tts/text/symbols.h"

namespace tts::tacotron2 {
namespace {

// Its alignment scores and free-running synthesis at each validation, with their plots and
// Griffin-Lim sample.
report::RunContents run_contents() {
  namespace metric = report::metric;
  const std::string val = metric::kVal;
  report::RunContents contents;
  contents.family = "Tacotron-2";
  contents.optimizers = {"model"};
  contents.summary = {{"diagonal score (teacher-forced)", val, metric::kDiagonalScore, "{:.3f}"},
                      {"focus rate (teacher-forced)", val, metric::kFocusRate, "{:.3f}"},
                      {"diagonal score (free-running)", val, metric::kInferDiagonalScore, "{:.3f}"},
                      {"stop token fired (free-running)", val, metric::kInferStopFired, "{:.2f}"}};
  report::ChartSpec scores{
      "Alignment scores at each validation (1 = a sharp diagonal)",
      "alignment_scores",
      {{"diagonal score", val, metric::kDiagonalScore},
       {"focus rate", val, metric::kFocusRate},
       {"diagonal score, free-running", val, metric::kInferDiagonalScore, true},
       {"focus rate, free-running", val, metric::kInferFocusRate, true}},
      "score"};
  scores.y_min = 0.0;
  scores.y_max = 1.0;
  report::ChartSpec free_running{
      "Free-running synthesis: stop token and length",
      "free_running",
      {{"stop token fired (fraction)", val, metric::kInferStopFired},
       {"max_decoder_steps hit (fraction)", val, metric::kInferMaxStepsHit},
       {"generated / real frames", val, metric::kInferFrameRatio, true}},
      "fraction, ratio"};
  free_running.y_min = 0.0;
  contents.charts = {scores, free_running};
  contents.plots = {{"alignment", "Attention alignment (teacher-forced)"},
                    {"mel", "Target, teacher-forced and free-running mels with the stop token"}};
  contents.samples = {{"", "Free-running synthesis (Griffin-Lim)"}};
  return contents;
}

}  // namespace

models::FamilyEntry entry() {
  models::FamilyEntry entry;
  entry.make = make_family;
  entry.summarize_checkpoint = summarize_checkpoint;
  entry.bench = make_bench;
  entry.check_size = [](const config::Config& config, int64_t, const std::string&) {
    require_model_size(config, text::symbol_count(config.text.symbol_set));
  };
  entry.acoustic.synthesize = synthesize;
  entry.acoustic.gta = run_gta;
  entry.acoustic.speech = [](const models::TrainedCheckpoint& trained,
                             const models::SpeechSettings& settings) {
    return speech_decoder(trained, settings);
  };
  entry.converters = {nvidia_converter()};
  entry.forward = forward_role();
  entry.report = run_contents();
  return entry;
}

}  // namespace tts::tacotron2
