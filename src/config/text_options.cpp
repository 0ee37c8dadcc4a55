#include "tts/config/text_options.h"

namespace tts::config {

void TextOptions::validate() const {
  require(!cleaners.empty(), "text.cleaners", "[]",
          "must name at least one cleaner, e.g. [english_cleaners] or [basic_cleaners]");
}

}  // namespace tts::config
