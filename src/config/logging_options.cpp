#include "tts/config/logging_options.h"

namespace tts::config {

// The level's choices are checked with the other choice lists (Config::validate).
void LoggingOptions::validate() const {}

}  // namespace tts::config
