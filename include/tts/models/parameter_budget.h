// One parameter budget for every family: kMaxParameterBytes of float32 weights. Each family
// computes its networks' parameter count arithmetically from a config (hifigan::parameter_count,
// wavenet::parameter_count, tacotron2::parameter_count_of), and whatever
// turns a config read from a file into a network checks it here first, before anything is
// allocated: a config of a few bytes can ask for tens of gigabytes.
#pragma once

#include <cstdint>
#include <string>

namespace tts::models {

// The largest network any family builds: 2 GiB of float32 parameters. NVIDIA's Tacotron-2 has 28
// million (0.1 GB), jik876's V1 HiFi-GAN 14 million; only a config made to exhaust memory reaches
// this.
inline constexpr double kMaxParameterBytes = double(int64_t{2} << 30);

// Throws tts::Error naming `what` (a file, "the config") when `parameters` float32 weights pass
// the budget. `widths` names the keys that size them (the fix).
void require_parameter_budget(double parameters, const std::string& what,
                              const std::string& widths);

// A checkpoint's config against the checkpoint (`source`): within the budget, and asking for no
// more than the `stored_values` tensor elements the file holds (a file of 2 kB cannot hold the
// weights of a 2 GB generator, which would otherwise be built before the shapes are compared).
void require_checkpoint_holds(double parameters, int64_t stored_values, const std::string& source,
                              const std::string& widths);

}  // namespace tts::models
