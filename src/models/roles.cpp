#include "tts/models/roles.h"

#include "tts/audio/mel_settings.h"
#include "tts/core/error.h"

namespace tts::models {

void Vocoder::check_mels(const config::AudioOptions& made_with, const std::string& what) const {
  audio::MismatchWording wording{
      fmt::format("{} were made with", what), fmt::format("vocoder {} was trained on", source_),
      [&](const std::string& key, const std::string& made, const std::string& expected) {
        return fmt::format(
            "make the mels with {}: {} (the acoustic model's config, then its training or "
            "tts-train preprocess), or use a vocoder trained on {}={} (fine-tune this one on a "
            "store made with those settings: tts-train train --config VOCODER.yaml --data STORE "
            "--init-from {})",
            key, expected, key, made, source_);
      }};
  std::vector<std::string> lines =
      audio::mel_settings_mismatches(made_with, config_.audio, wording);
  if (lines.empty()) return;
  throw UsageError(fmt::format(
      "{} do not match the vocoder's ({} setting{}); it would turn them into noise:\n  {}", what,
      lines.size(), lines.size() == 1 ? "" : "s", fmt::join(lines, "\n  ")));
}

void Vocoder::select_speaker(const std::string& name) {
  TTS_USAGE_CHECK(name.empty(), "{} is a one-speaker vocoder: it takes no --speaker (given '{}')",
                  source_, name);
}

std::vector<float> Vocoder::vocode(const torch::Tensor& mel) {
  return stream(ChunkPlan::whole())->push(mel, true);
}

}  // namespace tts::models
