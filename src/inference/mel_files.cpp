#include "tts/inference/mel_files.h"

#include <torch/torch.h>

#include <filesystem>

#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/data/feature_store.h"
#include "tts/formats/npy.h"

namespace tts::inference {
namespace fs = std::filesystem;

torch::Tensor read_mel_npy(const std::string& path, int64_t n_mels) {
  formats::NpyArray array = formats::read_npy(path);
  std::vector<int64_t> shape = array.shape;
  if (shape.size() == 3 && shape[0] == 1) shape.erase(shape.begin());
  TTS_CHECK(shape.size() == 2 && (shape[0] == n_mels || shape[1] == n_mels),
            "{}: expected a mel of {} channels, [frames, {}] (tts-train's layout) or [{}, frames] "
            "(NVIDIA's and jik876's), found shape [{}]",
            path, n_mels, n_mels, n_mels, fmt::join(array.shape, ", "));
  torch::Tensor mel = torch::from_blob(array.data.data(), shape, torch::kFloat32).clone();
  // Ours when the columns are the mel channels; else channels first.
  return shape[1] == n_mels ? mel : mel.t().contiguous();
}

namespace {

// A mel's settings file is a few hundred bytes: the audio section.
constexpr int64_t kMaxMelSettingsBytes = 64 * 1024;

}  // namespace

std::optional<config::AudioOptions> mel_settings_of(const std::string& path,
                                                    std::string* store_dir) {
  std::error_code error;
  const std::string beside = data::mel_settings_path(path);
  if (fs::is_regular_file(beside, error) && data::is_mel_settings_file(beside)) {
    const FileDescriptor fd = open_regular_file_for_read(beside);
    const int64_t size = file_size(fd, beside);
    TTS_CHECK(size <= kMaxMelSettingsBytes,
              "{}: {} bytes, far more than a mel's settings (an audio section of a few hundred); "
              "is it the settings file of {}?",
              beside, size, path);
    const std::string text = read_file(beside);
    try {
      const config::Config settings = config::parse_config_sections(text, beside, {"audio"});
      if (store_dir != nullptr) *store_dir = beside;
      return settings.audio;
    } catch (const UsageError& e) {
      throw Error(fmt::format("{}: the settings of {} do not load: {}", beside, path, e.what()));
    }
  }
  fs::path folder = fs::path(path).parent_path();
  if (folder.empty()) folder = ".";
  for (const fs::path& candidate : {folder, folder.parent_path()}) {
    if (candidate.empty() || !fs::is_regular_file(candidate / "features.yaml", error)) continue;
    data::StoreSettings settings = data::read_store_settings(candidate.string());
    if (store_dir != nullptr) *store_dir = candidate.string();
    return settings.config.audio;
  }
  return std::nullopt;
}

}  // namespace tts::inference
