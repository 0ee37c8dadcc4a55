#include "tts/models/tacotron2/training/alignment_metrics.h"

#include <torch/torch.h>

#include "tts/core/error.h"

namespace tts::tacotron2 {

AlignmentScores alignment_scores(const torch::Tensor& alignments,
                                 const torch::Tensor& decoder_steps,
                                 const torch::Tensor& text_lengths) {
  TTS_CHECK(alignments.dim() == 3,
            "alignment scores: expected attention weights [batch, decoder steps, text steps], "
            "found {} dimensions",
            alignments.dim());
  const int64_t batch = alignments.size(0);
  TTS_CHECK(decoder_steps.numel() == batch && text_lengths.numel() == batch,
            "alignment scores: {} attention matrices but {} decoder lengths and {} text lengths",
            batch, decoder_steps.numel(), text_lengths.numel());
  auto weights = alignments.detach().to(torch::kCPU, torch::kFloat);
  auto steps = decoder_steps.to(torch::kCPU, torch::kLong);
  auto tokens = text_lengths.to(torch::kCPU, torch::kLong);
  AlignmentScores scores;
  for (int64_t b = 0; b < batch; ++b) {
    int64_t n_steps = std::min(steps[b].item<int64_t>(), weights.size(1));
    int64_t n_tokens = std::min(tokens[b].item<int64_t>(), weights.size(2));
    if (n_steps <= 0 || n_tokens <= 0) continue;
    auto a = weights[b].slice(0, 0, n_steps).slice(1, 0, n_tokens);
    scores.diagonal += std::get<0>(a.max(0)).mean().item<double>();
    scores.focus += std::get<0>(a.max(1)).mean().item<double>();
    ++scores.utterances;
  }
  if (scores.utterances > 0) {
    scores.diagonal /= static_cast<double>(scores.utterances);
    scores.focus /= static_cast<double>(scores.utterances);
  }
  return scores;
}

}  // namespace tts::tacotron2
