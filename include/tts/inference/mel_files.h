// Mels from files for a vocoder (models/roles.h: the vocoder role; models::load_vocoder): an .npy
// mel in any of the usual layouts, and the settings it was made with when a feature store says.
#pragma once

#include <torch/types.h>

#include <optional>
#include <string>
#include <vector>

#include "tts/config/config.h"

namespace tts::inference {

// A mel read from an .npy file: [frames, n_mels] float32, whichever of the layouts it came in —
// ours [frames, n_mels], NVIDIA's and jik876's [n_mels, frames] or [1, n_mels, frames] — decided
// by which dimension is `n_mels`. Throws tts::Error naming the file when no dimension is.
torch::Tensor read_mel_npy(const std::string& path, int64_t n_mels);

// The settings `path`'s mels were made with: those of the settings file beside it (STEM.yaml for
// STEM.npy, data::mel_settings_path, which `synthesize` writes beside STEM.mel.npy; `store_dir`
// then names that file), or, when it lies in a feature store (STORE/mels/ID.npy, a gta output
// folder, or a folder with a features.yaml), that store's audio section, and the store in
// `store_dir`. nullopt for an .npy without settings (then the caller warns: it cannot check).
// Throws tts::Error for a settings file that does not load.
std::optional<config::AudioOptions> mel_settings_of(const std::string& path,
                                                    std::string* store_dir = nullptr);

}  // namespace tts::inference
