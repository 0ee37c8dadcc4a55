#include "tts/models/tacotron2/plot_tensors.h"

#include <torch/torch.h>

#include "tts/core/error.h"
#include "tts/models/tacotron2/alignment_metrics.h"

namespace tts::tacotron2 {

report::Matrix matrix_of(const torch::Tensor& values) {
  TTS_CHECK(values.dim() == 2, "plot: expected a 2-D tensor, found one with {} dimension(s)",
            values.dim());
  auto t = values.detach().to(torch::kCPU, torch::kFloat).contiguous();
  return {std::vector<float>(t.data_ptr<float>(), t.data_ptr<float>() + t.numel()),
          static_cast<int>(t.size(0)), static_cast<int>(t.size(1))};
}

report::Plot utterance_alignment_plot(const torch::Tensor& weights, int64_t step,
                                      const std::string& utterance, const std::string& kind) {
  report::AlignmentPlotInput input{matrix_of(weights), step, utterance, kind};
  auto one = [](int64_t n) { return torch::tensor({n}, torch::kInt64); };
  AlignmentScores scores = alignment_scores(weights.detach().to(torch::kFloat).unsqueeze(0),
                                            one(weights.size(0)), one(weights.size(1)));
  input.diagonal_score = scores.diagonal;
  input.focus_rate = scores.focus;
  return report::alignment_plot(input);
}

report::MelPanel mel_panel(const std::string& title, const torch::Tensor& frames) {
  return {title, matrix_of(frames)};
}

report::StopCurve stop_curve(const std::string& label, const torch::Tensor& values, bool dashed) {
  auto t = values.detach().to(torch::kCPU, torch::kFloat).contiguous().view(-1);
  return {label, std::vector<float>(t.data_ptr<float>(), t.data_ptr<float>() + t.numel()), dashed};
}

}  // namespace tts::tacotron2
