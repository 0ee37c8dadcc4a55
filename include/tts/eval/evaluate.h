// The figures of `tts-train evaluate` for one pair of clips, and the report over many
// (docs/evaluate.md): MCD, F0 RMSE and VDE on one DTW path over the mel-cepstra (Note
// [Evaluation frames] in analysis.h), the CER of a transcript when one was made.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tts/eval/cer.h"

namespace tts::eval {

struct UtteranceFigures {
  std::string id;
  std::string speaker;  // empty when unknown
  // 10 / ln 10 * sqrt(2 * sum_{d=1..13} (c_ref,d - c_syn,d)^2), dB, averaged over the path.
  double mcd_db = 0.0;
  // sqrt(mean (f0_ref - f0_syn)^2) in Hz over the path's pairs voiced on both sides; NaN when no
  // pair is.
  double f0_rmse_hz = 0.0;
  double vde = 0.0;    // the share of the path's pairs whose voicing differs
  int64_t frames = 0;  // pairs on the path
  int64_t reference_frames = 0;
  int64_t synthesized_frames = 0;
  int64_t voiced_pairs = 0;      // pairs voiced on both sides (F0 RMSE's frames)
  std::optional<CerResult> cer;  // when a transcript was made
  std::string transcript;
};

// The figures of `synthesized` against `reference`, both mono at kSampleRate. `id` names the
// utterance in errors (an empty clip, an alignment past kMaxDtwCells).
UtteranceFigures compare_utterances(const std::vector<float>& reference,
                                    const std::vector<float>& synthesized, const std::string& id);

// What the report says beside the figures.
struct ReportContext {
  std::vector<std::string> reference_only;    // ids without a synthesized clip
  std::vector<std::string> synthesized_only;  // ids without a reference clip
  std::string asr;                            // "" or the recognizer's name
};

// evaluate.json: {"settings", "utterances": [...], "summary", "speakers", "reference_only",
// "synthesized_only"}; NaN figures are written as null. Means are over utterances (an
// utterance's F0 RMSE counts only where defined, CER only where a transcript was made).
std::string report_json(const std::vector<UtteranceFigures>& utterances,
                        const ReportContext& context);

// evaluate.tsv: a header, then one line per utterance (id, speaker, mcd_db, f0_rmse_hz, vde,
// frames, cer; an undefined figure is empty), then the means: a line per speaker with the id
// "mean:SPEAKER" and the overall "mean".
std::string report_tsv(const std::vector<UtteranceFigures>& utterances);

}  // namespace tts::eval
