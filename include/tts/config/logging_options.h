// Config section `logging`: what a run reports and writes.
#pragma once

#include <string>

#include "tts/config/field.h"

namespace tts::config {

enum class LogLevel { kTrace, kDebug, kInfo, kWarn, kError, kOff };
TTS_CHOICE_NAMES(LogLevel, {LogLevel::kTrace, "trace"}, {LogLevel::kDebug, "debug"},
                 {LogLevel::kInfo, "info"}, {LogLevel::kWarn, "warn"}, {LogLevel::kError, "error"},
                 {LogLevel::kOff, "off"});

struct LoggingOptions {
  // Each field's meaning is documented once, in visit(); dumped configs carry it as a comment.
  LogLevel level = LogLevel::kInfo;
  bool tensorboard = true;
  bool plots = true;
  bool samples = true;

  template <class V>
  void visit(V& v) {
    v("level", level, "log level: trace, debug, info, warn, error or off");
    v("tensorboard", tensorboard, "write TensorBoard event files in the run directory");
    v("plots", plots, "write alignment and mel PNGs at each validation");
    v("samples", samples, "write Griffin-Lim WAV samples at each validation");
  }
  void validate() const;
};

}  // namespace tts::config
