#include "tts/config/logging_options.h"

namespace tts::config {

// The level is a choice: parsing already refused any other name.
void LoggingOptions::validate() const {}

}  // namespace tts::config
