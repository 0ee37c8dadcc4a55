// A trained vocoder loaded once for inference (HiFi-GAN; WaveNet), with the settings of the mels it
// was trained on, and the mel match check: a vocoder refuses mels made with other settings
// (sample rate, hop, n_fft/window, mel count, fmin/fmax, mel scale and norm, compression and its
// floor), naming each differing value on both sides and the fix, before it generates anything.
// `vocode`, `synthesize --vocoder` and the training of a vocoder on a store (data/feature_store.h)
// compare through the same audio::mel_settings_mismatches.
#pragma once

#include <torch/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tts/config/config.h"

namespace tts::inference {

class Vocoder {
 public:
  virtual ~Vocoder() = default;
  // The checkpoint's config: audio.* are the settings of the mels it was trained on.
  const config::Config& config() const { return config_; }
  const std::string& source() const { return source_; }
  int64_t step() const { return step_; }

  // Throws UsageError when mels made with `made_with` are not what this vocoder was trained on:
  // one line per differing setting, both values, and the fix. `what` names the mels ("the mels
  // of a.npy", "the mels of Tacotron-2 checkpoint T").
  void check_mels(const config::AudioOptions& made_with, const std::string& what) const;

  // Audio samples [frames * hop] at config().audio.sample_rate from `mel` [frames, n_mels] (CPU,
  // float32). Throws tts::Error for a mel of another channel count.
  virtual std::vector<float> vocode(const torch::Tensor& mel) = 0;

 protected:
  config::Config config_;
  std::string source_;
  int64_t step_ = 0;
};

// Reads the newest readable checkpoint at `path` (a file, RUN/checkpoints/latest or a run folder)
// of a vocoder family (model.kind hifigan or wavenet) onto `device`, in eval mode. Throws
// UsageError for a checkpoint of another family (a Tacotron-2 one names --checkpoint as its
// place), tts::Error for one that does not load.
std::unique_ptr<Vocoder> load_vocoder(const std::string& path, const torch::Device& device);

// A mel read from an .npy file: [frames, n_mels] float32, whichever of the layouts it came in —
// ours [frames, n_mels], NVIDIA's and jik876's [n_mels, frames] or [1, n_mels, frames] — decided
// by which dimension is `n_mels`. Throws tts::Error naming the file when no dimension is.
torch::Tensor read_mel_npy(const std::string& path, int64_t n_mels);

// The settings `path`'s mels were made with, when it lies in a feature store (STORE/mels/ID.npy,
// a gta output folder, or a folder with a features.yaml): that store's audio section, and the
// store it came from in `store_dir`. nullopt for an .npy without settings (then the caller warns:
// it cannot check).
std::optional<config::AudioOptions> mel_settings_of(const std::string& path,
                                                    std::string* store_dir = nullptr);

}  // namespace tts::inference
