#include "tts/models/vocoder_entry.h"

#include "tts/models/parameter_budget.h"

namespace tts::models {

FamilyEntry vocoder_entry(VocoderParts parts) {
  FamilyEntry entry;
  entry.make = std::move(parts.make);
  entry.summarize_checkpoint = std::move(parts.summarize_checkpoint);
  entry.bench = std::move(parts.bench);
  entry.check_size = [count = std::move(parts.parameter_count), keys = parts.sizing_keys](
                         const config::Config& config, int64_t stored_values,
                         const std::string& source) {
    require_checkpoint_holds(count(config), stored_values, source, keys);
  };
  entry.load_vocoder = std::move(parts.load_vocoder);
  entry.converters = {std::move(parts.converter)};
  entry.forward = std::move(parts.forward);
  entry.report = std::move(parts.report);
  return entry;
}

}  // namespace tts::models
