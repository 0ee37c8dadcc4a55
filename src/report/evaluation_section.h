// The report's Evaluation section: what `tts-train evaluate --out RUN/eval` measured
// (docs/evaluate.md), read from RUN/eval/evaluate.json. Private to the report module.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace tts::report {

// The folder of the run that holds its evaluation, and the file's limit.
inline constexpr const char* kEvaluationFolder = "eval";
inline constexpr uint64_t kEvaluationBytes = uint64_t{16} << 20;

// The section's HTML: the summary (utterances, mean MCD, F0 RMSE, VDE, CER) and a row per
// speaker; "" when the run has no RUN/eval/evaluate.json; a warning line when the file cannot be
// read or is not an evaluation. Never throws.
std::string evaluation_section(const std::filesystem::path& run);

}  // namespace tts::report
