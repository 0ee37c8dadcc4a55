// jik876's config.json <-> our config sections (the half of conversion/jik876.h without tensors).
#include <algorithm>

#include "jik876_internal.h"
#include "tts/core/error.h"
#include "tts/core/printable.h"
#include "tts/formats/json_reader.h"
#include "tts/models/hifigan/conversion/jik876.h"
#include "tts/models/hifigan/layers/parameter_count.h"
#include "tts/models/parameter_budget.h"
#include "tts/models/peer_settings.h"

namespace tts::hifigan {
namespace {

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

// `value` as the text of a --set override (YAML: a number, a quoted string, a flow list), written
// by hand from the parsed value: lists nest at most formats::JsonLimits::max_depth levels.
std::string override_text(const formats::JsonValue& value, const std::string& path,
                          const std::string& key) {
  using Kind = formats::JsonValue::Kind;
  switch (value.kind) {
    case Kind::kNull:
      return "null";
    case Kind::kBool:
      return value.boolean ? "true" : "false";
    case Kind::kNumber:
      return value.text;
    case Kind::kString: {
      std::string out = "\"";
      for (char c : value.text) {
        const auto byte = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
          out += '\\';
          out += c;
        } else if (byte < 0x20 || byte == 0x7F) {
          out += fmt::format("\\x{:02x}", byte);
        } else {
          out += c;
        }
      }
      return out + "\"";
    }
    case Kind::kArray: {
      std::vector<std::string> items;
      for (const formats::JsonValue& item : value.items) {
        items.push_back(override_text(item, path, key));
      }
      return fmt::format("[{}]", fmt::join(items, ", "));
    }
    case Kind::kObject:
      break;
  }
  throw UsageError(
      fmt::format("'{}' line {}: key '{}' holds an object; jik876's config.json has a "
                  "number, a string or a list there",
                  path, value.line, printable(key)));
}

}  // namespace

config::Config hifigan_config_from_json(const std::string& config_json_path, config::Config base) {
  // A file that is no JSON, or past the reader's bounds, is the file's error (exit code 1).
  const formats::JsonValue root = formats::read_json_file(config_json_path);
  TTS_USAGE_CHECK(root.kind == formats::JsonValue::Kind::kObject,
                  "'{}': expected jik876's config.json (a JSON object), found {}", config_json_path,
                  root.kind_name());
  bool fmax_is_nyquist = false;
  for (const auto& member : root.members) {
    // Named, not a structured binding: C++17 lambdas cannot capture one (clang refuses).
    const std::string& key = member.first;
    const formats::JsonValue& value = member.second;
    if (std::find(std::begin(kIgnored), std::end(kIgnored), key) != std::end(kIgnored)) continue;
    const auto* mapping = std::find_if(std::begin(kMappings), std::end(kMappings),
                                       [&](const KeyMapping& m) { return key == m.theirs; });
    if (mapping == std::end(kMappings)) {
      std::vector<std::string> known;
      for (const KeyMapping& m : kMappings) known.emplace_back(m.theirs);
      throw UsageError(fmt::format(
          "'{}' line {}: unknown key '{}'; jik876/hifi-gan's config.json has {} (and {}); remove "
          "the key or map it by hand with --set",
          config_json_path, value.line, printable(key), fmt::join(known, ", "),
          fmt::join(kIgnored, ", ")));
    }
    // jik876's code tests h.resblock == '1': a number there selects resblock 2.
    TTS_USAGE_CHECK(key != "resblock" || value.kind == formats::JsonValue::Kind::kString,
                    "'{}' line {}: resblock must be the string \"1\" or \"2\" (jik876's code "
                    "compares it with '1', so the number 1 would build resblock 2)",
                    config_json_path, value.line);
    const bool null = value.kind == formats::JsonValue::Kind::kNull;
    // null: jik876 passes None to librosa, which means sample_rate / 2.
    if (null && key == "fmax") {
      fmax_is_nyquist = true;
      continue;
    }
    const std::string text =
        null && key == "fmax_for_loss" ? "0" : override_text(value, config_json_path, key);
    try {
      config::apply_override(base, fmt::format("{}={}", mapping->ours, text));
    } catch (const Error& e) {
      throw UsageError(fmt::format("'{}' line {}: key '{}' (our {}): {}", config_json_path,
                                   value.line, key, mapping->ours, e.what()));
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
  models::cut_to_whole_frames(base.hifigan.segment_size, base.audio.hop_length, config_json_path,
                              "segment_size");
  try {
    base.validate();
  } catch (const Error& e) {
    throw UsageError(fmt::format("'{}' (jik876's config.json): {}", config_json_path, e.what()));
  }
  models::require_parameter_budget(parameter_count(base), fmt::format("'{}'", config_json_path),
                                   kSizingKeys);
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
