// jik876's config.json <-> our config sections (the half of interop.h without tensors).
#include <yaml-cpp/yaml.h>

#include <algorithm>

#include "interop_internal.h"
#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/models/hifigan/interop.h"

namespace tts::hifigan {
namespace {

// jik876's configs have ~30 lines; a megabyte is no config of its.
constexpr int64_t kMaxConfigBytes = 1 << 20;

// jik876's key and the key of ours that holds its value.
struct KeyMapping {
  const char* theirs;
  const char* ours;
};
constexpr KeyMapping kMappings[] = {
    {"resblock", "hifigan.resblock"},
    {"upsample_rates", "hifigan.upsample_rates"},
    {"upsample_kernel_sizes", "hifigan.upsample_kernel_sizes"},
    {"upsample_initial_channel", "hifigan.upsample_initial_channel"},
    {"resblock_kernel_sizes", "hifigan.resblock_kernel_sizes"},
    {"resblock_dilation_sizes", "hifigan.resblock_dilation_sizes"},
    {"segment_size", "hifigan.segment_size"},
    {"fmax_for_loss", "hifigan.fmax_for_loss"},
    // Ours, written only when not 1 (jik876's code ignores it, and cannot build such
    // discriminators: its do_ files are for our import).
    {"discriminator_divisor", "hifigan.discriminator_divisor"},
    {"num_mels", "audio.n_mels"},
    {"n_fft", "audio.n_fft"},
    {"hop_size", "audio.hop_length"},
    {"win_size", "audio.win_length"},
    {"sampling_rate", "audio.sample_rate"},
    {"fmin", "audio.fmin"},
    {"fmax", "audio.fmax"},
    {"batch_size", "train.batch_size"},
    {"learning_rate", "train.learning_rate"},
    {"adam_b1", "train.adam_beta1"},
    {"adam_b2", "train.adam_beta2"},
    {"lr_decay", "train.lr_decay_rate"},
    {"seed", "train.seed"},
};
// Keys of jik876's configs that describe its processes, not the model or its training, and
// num_freq, which its code never reads (n_fft / 2 + 1 is what it uses).
constexpr const char* kIgnored[] = {"num_gpus", "num_workers", "dist_config", "num_freq"};

std::string flow(const YAML::Node& node) {
  YAML::Emitter out;
  out.SetSeqFormat(YAML::Flow);
  out.SetMapFormat(YAML::Flow);
  out << node;
  return out.c_str();
}

std::string read_bounded(const std::string& path) {
  FileDescriptor fd = open_regular_file_for_read(path);
  const int64_t size = file_size(fd, path);
  TTS_USAGE_CHECK(size <= kMaxConfigBytes,
                  "'{}' has {} bytes; jik876's config.json has about a kilobyte (at most {} read): "
                  "is it the config.json of jik876/hifi-gan?",
                  path, size, kMaxConfigBytes);
  return read_at(fd, path, 0, size);
}

}  // namespace

config::Config hifigan_config_from_json(const std::string& config_json_path, config::Config base) {
  YAML::Node root;
  try {
    // JSON is YAML (flow style), which the config parser reads already.
    root = YAML::Load(read_bounded(config_json_path));
  } catch (const YAML::Exception& e) {
    throw UsageError(
        fmt::format("'{}' line {}: not valid JSON: {}", config_json_path, e.mark.line + 1, e.msg));
  }
  TTS_USAGE_CHECK(root.IsMap(), "'{}': expected jik876's config.json (a JSON object), found {}",
                  config_json_path, root.IsSequence() ? "an array" : "a scalar");
  bool fmax_is_nyquist = false;
  for (const auto& entry : root) {
    const std::string key = entry.first.Scalar();
    const YAML::Node& value = entry.second;
    if (std::find(std::begin(kIgnored), std::end(kIgnored), key) != std::end(kIgnored)) continue;
    const auto* mapping = std::find_if(std::begin(kMappings), std::end(kMappings),
                                       [&](const KeyMapping& m) { return key == m.theirs; });
    if (mapping == std::end(kMappings)) {
      std::vector<std::string> known;
      for (const KeyMapping& m : kMappings) known.emplace_back(m.theirs);
      throw UsageError(fmt::format(
          "'{}' line {}: unknown key '{}'; jik876/hifi-gan's config.json has {} (and {}); remove "
          "the key or map it by hand with --set",
          config_json_path, entry.first.Mark().line + 1, key, fmt::join(known, ", "),
          fmt::join(kIgnored, ", ")));
    }
    // jik876's code tests h.resblock == '1': a number there selects resblock 2.
    TTS_USAGE_CHECK(key != "resblock" || (value.IsScalar() && value.Tag() == "!"),
                    "'{}' line {}: resblock must be the string \"1\" or \"2\" (jik876's code "
                    "compares it with '1', so the number 1 would build resblock 2)",
                    config_json_path, entry.first.Mark().line + 1);
    // null: jik876 passes None to librosa, which means sample_rate / 2.
    if (value.IsNull() && key == "fmax") {
      fmax_is_nyquist = true;
      continue;
    }
    const std::string text = value.IsNull() && key == "fmax_for_loss" ? "0" : flow(value);
    try {
      config::apply_override(base, fmt::format("{}={}", mapping->ours, text));
    } catch (const Error& e) {
      throw UsageError(fmt::format("'{}' line {}: key '{}' (our {}): {}", config_json_path,
                                   entry.first.Mark().line + 1, key, mapping->ours, e.what()));
    }
  }
  if (fmax_is_nyquist) base.audio.fmax = base.audio.sample_rate / 2.0;
  // What jik876's train.py and meldataset.py do without a key for it.
  base.model.kind = config::ModelKind::kHifigan;
  base.audio.waveforms = true;
  base.train.optimizer = config::Optimizer::kAdamW;
  base.train.weight_decay = kJik876WeightDecay;
  base.train.adam_eps = kJik876AdamEps;
  base.train.lr_schedule = config::LrSchedule::kPerEpoch;
  base.train.grad_clip_thresh = 0;
  base.audio.mel_scale = config::MelScale::kSlaney;
  base.audio.mel_norm = config::MelNorm::kSlaney;
  base.audio.compression = config::Compression::kLog;
  base.audio.log_floor = 1e-5;
  base.audio.preemphasis = 0;
  base.audio.magnitude_power = 1;
  base.audio.trim = false;
  try {
    base.validate();
  } catch (const Error& e) {
    throw UsageError(fmt::format("'{}' (jik876's config.json): {}", config_json_path, e.what()));
  }
  return base;
}

std::string jik876_config_json(const config::Config& config) {
  const config::HifiganOptions& h = config.hifigan;
  const config::AudioOptions& a = config.audio;
  const config::TrainOptions& t = config.train;
  std::vector<std::string> dilations;
  for (const auto& d : h.resblock_dilation_sizes) {
    dilations.push_back(fmt::format("[{}]", fmt::join(d, ", ")));
  }
  // Keys in config_v1.json's order; the process settings as jik876 ships them.
  return fmt::format(
      R"({{
    "resblock": "{}",
    "num_gpus": 0,
    "batch_size": {},
    "learning_rate": {},
    "adam_b1": {},
    "adam_b2": {},
    "lr_decay": {},
    "seed": {},

    "upsample_rates": [{}],
    "upsample_kernel_sizes": [{}],
    "upsample_initial_channel": {},
    "resblock_kernel_sizes": [{}],
    "resblock_dilation_sizes": [{}],

    "segment_size": {},
    "num_mels": {},
    "num_freq": {},
    "n_fft": {},
    "hop_size": {},
    "win_size": {},

    "sampling_rate": {},

    "fmin": {},
    "fmax": {},
    "fmax_for_loss": {},
{}
    "num_workers": 4,

    "dist_config": {{
        "dist_backend": "nccl",
        "dist_url": "tcp://localhost:54321",
        "world_size": 1
    }}
}}
)",
      h.resblock, t.batch_size, t.learning_rate, t.adam_beta1, t.adam_beta2, t.lr_decay_rate,
      t.seed, fmt::join(h.upsample_rates, ", "), fmt::join(h.upsample_kernel_sizes, ", "),
      h.upsample_initial_channel, fmt::join(h.resblock_kernel_sizes, ", "),
      fmt::join(dilations, ", "), h.segment_size, a.n_mels, a.n_fft / 2 + 1, a.n_fft, a.hop_length,
      a.win_length, a.sample_rate, a.fmin, a.fmax,
      h.fmax_for_loss > 0 ? fmt::format("{}", h.fmax_for_loss) : "null",
      h.discriminator_divisor == 1
          ? std::string()
          : fmt::format("    \"discriminator_divisor\": {},\n", h.discriminator_divisor));
}

}  // namespace tts::hifigan
