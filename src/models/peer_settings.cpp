#include "tts/models/peer_settings.h"

#include "tts/core/logging.h"

namespace tts::models {

void cut_to_whole_frames(int& window, int hop, const std::string& file, const std::string& key) {
  if (hop <= 0 || window < hop || window % hop == 0) return;
  const int whole = window / hop * hop;
  log::get("convert")->warn(
      "{}: {} is {} samples, not a whole number of {}-sample frames; training windows are cut "
      "to {} samples ({} frames), as the original's loader cuts them (the network and its audio "
      "are unchanged)",
      file, key, window, hop, whole, whole / hop);
  window = whole;
}

}  // namespace tts::models
