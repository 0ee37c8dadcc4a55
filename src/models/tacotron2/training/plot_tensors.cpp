#include "tts/models/tacotron2/training/plot_tensors.h"

#include <torch/torch.h>

#include "tts/core/error.h"
#include "tts/models/plot_tensors.h"
#include "tts/models/tacotron2/training/alignment_metrics.h"

namespace tts::tacotron2 {

report::Plot utterance_alignment_plot(const torch::Tensor& weights, int64_t step,
                                      const std::string& utterance, const std::string& kind) {
  report::AlignmentPlotInput input{models::matrix_of(weights), step, utterance, kind};
  auto one = [](int64_t n) { return torch::tensor({n}, torch::kInt64); };
  AlignmentScores scores = alignment_scores(weights.detach().to(torch::kFloat).unsqueeze(0),
                                            one(weights.size(0)), one(weights.size(1)));
  input.diagonal_score = scores.diagonal;
  input.focus_rate = scores.focus;
  return report::alignment_plot(input);
}

}  // namespace tts::tacotron2
