// Scores that say whether attention has learnt to align, from the attention weights of a batch.
// Both are masked by the real lengths (padding steps and tokens take no part) and averaged first
// over one utterance, then over the utterances.
//  - diagonal score (Coqui TTS's alignment score; 1 - score is its align_error): for each input
//    token, the largest weight any decoder step gives it, averaged over the tokens. A token the
//    decoder skips lowers it.
//  - focus rate (FastSpeech, ESPnet): for each decoder step, the largest weight it gives any
//    token, averaged over the steps. Attention spread over many tokens lowers it.
// A clean monotonic alignment scores near 1 on both; uniform attention over T tokens scores 1/T.
#pragma once

#include <torch/types.h>

#include <cstdint>

namespace tts::tacotron2 {

struct AlignmentScores {
  double diagonal = 0;
  double focus = 0;
  int64_t utterances = 0;  // how many utterances the means are over
};

// `alignments` [B, decoder steps, text steps]; `decoder_steps` and `text_lengths` [B] int64,
// the real lengths of each item (decoder steps: tacotron2::TacotronOutput::decoder_lengths()).
// Throws tts::Error when the shapes disagree.
AlignmentScores alignment_scores(const torch::Tensor& alignments,
                                 const torch::Tensor& decoder_steps,
                                 const torch::Tensor& text_lengths);

}  // namespace tts::tacotron2
