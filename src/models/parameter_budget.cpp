#include "tts/models/parameter_budget.h"

#include "tts/core/error.h"

namespace tts::models {

void require_parameter_budget(double parameters, const std::string& what,
                              const std::string& widths) {
  const double bytes = parameters * sizeof(float);
  TTS_CHECK(bytes <= kMaxParameterBytes,
            "{}: the networks of its config would have {:.0f} parameters ({:.1f} GB), past the "
            "limit of {:.1f} GB for any model (jik876's HiFi-GAN V1 has 14 million, r9y9's "
            "WaveNet 4.7 million, NVIDIA's Tacotron-2 28 million); lower {}",
            what, parameters, bytes / 1e9, kMaxParameterBytes / 1e9, widths);
}

void require_checkpoint_holds(double parameters, int64_t stored_values, const std::string& source,
                              const std::string& widths) {
  const std::string what = source + " (config)";
  require_parameter_budget(parameters, what, widths);
  TTS_CHECK(parameters <= static_cast<double>(stored_values),
            "{}: the networks of its config would have {:.0f} parameters, but the checkpoint holds "
            "{} values in all: its config does not belong to its weights (the file is damaged or "
            "was made to exhaust memory)",
            what, parameters, stored_values);
}

}  // namespace tts::models
