#include "tts/models/wavenet/conversion/r9y9.h"

#include <torch/torch.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>
#include <vector>

#include "tts/checkpoint/state_dict.h"
#include "tts/checkpoint/state_dict_keys.h"
#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/core/printable.h"
#include "tts/formats/json_reader.h"
#include "tts/formats/torch_file.h"
#include "tts/models/parameter_budget.h"
#include "tts/models/peer_settings.h"
#include "tts/models/wavenet/layers/network.h"
#include "tts/models/wavenet/layers/parameter_count.h"

namespace tts::wavenet {
using formats::PickleValue;
namespace {

constexpr double kPreemphasis = 0.85;  // r9y9's audio.preemphasis coefficient

using formats::JsonValue;

// Typed, bounded reads of one hparams file's keys; errors name the file and the key.
class Hparams {
 public:
  explicit Hparams(const std::string& path) : path_(path), root_(formats::read_json_file(path)) {
    TTS_CHECK(root_.kind == JsonValue::Kind::kObject,
              "{}: expected r9y9's hparams (a JSON object of settings), found {}", path,
              root_.kind_name());
  }

  const JsonValue* node(const std::string& key) const { return root_.find(key); }

  int64_t integer(const JsonValue* node, const std::string& key, int64_t low, int64_t high) const {
    TTS_CHECK(node != nullptr && node->kind == JsonValue::Kind::kNumber,
              "{}: key '{}' must be an integer, found {}", path_, key, shown(node));
    // Python writes an int without a point; a float that holds an integer (256.0) is read too.
    const std::string& text = node->text;
    int64_t value = 0;
    if (text.find_first_of(".eEIN") == std::string::npos) {
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
      TTS_CHECK(error == std::errc() && end == text.data() + text.size(),
                "{}: key '{}' is {}, past any integer it can be", path_, key, shown(node));
    } else {
      const double real = std::strtod(text.c_str(), nullptr);
      TTS_CHECK(std::isfinite(real) && real == std::floor(real) && std::abs(real) < 1e15,
                "{}: key '{}' must be an integer, found {}", path_, key, shown(node));
      value = static_cast<int64_t>(real);
    }
    TTS_CHECK(value >= low && value <= high, "{}: key '{}' is {}; expected {} to {}", path_, key,
              value, low, high);
    return value;
  }
  int64_t integer(const std::string& key, int64_t low, int64_t high) const {
    return integer(root_.find(key), key, low, high);
  }
  double real(const std::string& key, double low, double high) const {
    const JsonValue* node = root_.find(key);
    TTS_CHECK(node != nullptr && node->kind == JsonValue::Kind::kNumber,
              "{}: key '{}' must be a number, found {}", path_, key, shown(node));
    const double value = std::strtod(node->text.c_str(), nullptr);
    TTS_CHECK(std::isfinite(value), "{}: key '{}' must be a finite number, found {}", path_, key,
              shown(node));
    TTS_CHECK(value >= low && value <= high, "{}: key '{}' is {}; expected {} to {}", path_, key,
              value, low, high);
    return value;
  }
  std::string text(const std::string& key, const std::string& fallback) const {
    const JsonValue* node = root_.find(key);
    if (node == nullptr || node->kind == JsonValue::Kind::kNull) return fallback;
    TTS_CHECK(node->kind == JsonValue::Kind::kString && node->text.size() <= 64,
              "{}: key '{}' must be a short string, found {}", path_, key, shown(node));
    return node->text;
  }
  bool flag(const std::string& key, bool fallback) const {
    const JsonValue* node = root_.find(key);
    if (node == nullptr) return fallback;
    TTS_CHECK(node->kind == JsonValue::Kind::kBool, "{}: key '{}' must be true or false, found {}",
              path_, key, shown(node));
    return node->boolean;
  }
  bool null(const std::string& key) const {
    const JsonValue* node = root_.find(key);
    return node == nullptr || node->kind == JsonValue::Kind::kNull;
  }
  const std::string& path() const { return path_; }

 private:
  static std::string shown(const JsonValue* node) {
    if (node == nullptr) return "nothing (the key is missing)";
    if (node->kind == JsonValue::Kind::kNumber || node->kind == JsonValue::Kind::kString) {
      return fmt::format("'{}'", printable(node->text.substr(0, 64)));
    }
    return node->kind_name();
  }
  std::string path_;
  JsonValue root_;
};

// The WaveNet settings of r9y9's file (see R9y9Hparams for what each becomes).
config::WavenetOptions wavenet_options(const Hparams& h, int64_t num_mels) {
  config::WavenetOptions o;
  const std::string input_type = h.text("input_type", "raw");
  TTS_CHECK(input_type == "raw",
            "{}: key 'input_type' is '{}'; only raw is supported (scalar input with a mixture "
            "output): train r9y9's model with input_type raw",
            h.path(), input_type);
  const std::string output = h.text("output_distribution", "Logistic");
  TTS_CHECK(output == "Logistic" || output == "Normal",
            "{}: key 'output_distribution' is '{}'; expected Logistic or Normal", h.path(), output);
  o.output_distribution =
      output == "Logistic" ? config::WavenetOutput::kLogistic : config::WavenetOutput::kNormal;
  o.out_channels = h.integer("out_channels", 2, config::kMaxWavenetChannels);
  o.layers = h.integer("layers", 1, config::kMaxWavenetLayers);
  o.stacks = h.integer("stacks", 1, config::kMaxWavenetLayers);
  o.residual_channels = h.integer("residual_channels", 1, config::kMaxWavenetChannels);
  o.gate_channels = h.integer("gate_channels", 2, config::kMaxWavenetChannels);
  o.skip_out_channels = h.integer("skip_out_channels", 1, config::kMaxWavenetChannels);
  o.dropout = h.real("dropout", 0, 0.999);
  o.kernel_size = h.integer("kernel_size", 1, 255);
  o.cin_pad = h.integer("cin_pad", 0, 255);
  o.log_scale_min = h.real("log_scale_min", -1e4, -1e-9);
  o.quantize_channels = h.integer("quantize_channels", 2, 1 << 24);
  o.gin_channels = h.integer("gin_channels", -1, config::kMaxWavenetChannels);
  if (o.gin_channels > 0) {
    o.n_speakers = h.integer("n_speakers", 1, config::kMaxWavenetSpeakers);
  }
  if (!h.null("max_time_steps")) {
    o.max_time_steps = h.integer("max_time_steps", 1, config::kMaxTimeSteps);
  }
  o.exponential_moving_average = h.flag("exponential_moving_average", true);
  if (o.exponential_moving_average) o.ema_decay = h.real("ema_decay", 0, 0.999999999);

  const int64_t cin = h.integer("cin_channels", -1, config::kMaxMels);
  TTS_CHECK(cin == num_mels,
            "{}: key 'cin_channels' is {} but 'num_mels' is {}; our WaveNet is conditioned on "
            "all the mels (a model without local conditioning is not supported)",
            h.path(), cin, num_mels);
  TTS_CHECK(h.flag("upsample_conditional_features", true),
            "{}: key 'upsample_conditional_features' is false; only the upsampling network "
            "(ConvInUpsampleNetwork) is supported",
            h.path());
  const std::string net = h.text("upsample_net", "ConvInUpsampleNetwork");
  TTS_CHECK(net == "ConvInUpsampleNetwork",
            "{}: key 'upsample_net' is '{}'; only ConvInUpsampleNetwork is supported", h.path(),
            net);
  const JsonValue* params = h.node("upsample_params");
  TTS_CHECK(params != nullptr && params->kind == JsonValue::Kind::kObject,
            "{}: key 'upsample_params' must be an object", h.path());
  const JsonValue* scales = params->find("upsample_scales");
  TTS_CHECK(scales != nullptr && scales->kind == JsonValue::Kind::kArray &&
                scales->items.size() >= 1 && scales->items.size() <= 16,
            "{}: key 'upsample_params.upsample_scales' must be a list of 1 to 16 integers",
            h.path());
  o.upsample_scales.clear();
  for (const JsonValue& scale : scales->items) {
    o.upsample_scales.push_back(
        static_cast<int>(h.integer(&scale, "upsample_params.upsample_scales", 1, 1024)));
  }
  if (const JsonValue* kernel = params->find("freq_axis_kernel_size")) {
    o.freq_axis_kernel_size =
        static_cast<int>(h.integer(kernel, "upsample_params.freq_axis_kernel_size", 1, 255));
  }
  for (const char* key : {"upsample_activation", "mode"}) {
    const JsonValue* value = params->find(key);
    const std::string expected = std::string(key) == "mode" ? "nearest" : "none";
    TTS_CHECK(
        value == nullptr || (value->kind == JsonValue::Kind::kString && value->text == expected),
        "{}: key 'upsample_params.{}' must be '{}' (the only upsampler supported)", h.path(), key,
        expected);
  }
  try {
    o.validate();
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {} (r9y9's key of the same name)", h.path(), e.what()));
  }
  return o;
}

config::AudioOptions audio_options(const Hparams& h) {
  config::AudioOptions a;
  a.sample_rate = h.integer("sample_rate", 1000, 384000);
  a.n_fft = h.integer("fft_size", 16, config::kMaxFrameSamples);
  a.hop_length = h.null("hop_size")
                     ? std::lround(h.real("frame_shift_ms", 0.01, 1000) / 1000 * a.sample_rate)
                     : h.integer("hop_size", 1, config::kMaxFrameSamples);
  const int64_t win = h.integer("win_length", -1, config::kMaxFrameSamples);
  a.win_length =
      win > 0 ? win : std::lround(h.real("win_length_ms", 0.01, 1000) / 1000 * a.sample_rate);
  a.n_mels = h.integer("num_mels", 1, config::kMaxMels);
  a.fmin = h.real("fmin", 0, a.sample_rate / 2.0);
  a.fmax = h.null("fmax") ? a.sample_rate / 2.0 : h.real("fmax", a.fmin, a.sample_rate / 2.0);
  a.preemphasis = h.text("preprocess", "") == "preemphasis" ? kPreemphasis : 0.0;
  // librosa's filterbank defaults, as r9y9's audio.py builds it; log10 and the mean/variance
  // standardization have no counterpart here (see r9y9.h).
  a.mel_scale = config::MelScale::kSlaney;
  a.mel_norm = config::MelNorm::kSlaney;
  a.pad_mode = config::PadMode::kReflect;
  a.magnitude_power = 1.0;
  a.center = true;
  return a;
}

// The state dict inside r9y9's file: under 'state_dict', or the whole file; "module." removed.
std::map<std::string, torch::Tensor> file_tensors(const PickleValue& root,
                                                  const std::string& path) {
  const PickleValue* dict = root.find("state_dict");
  return checkpoint::foreign_state_dict(
      dict != nullptr ? *dict : root, path,
      "r9y9's checkpoint (a dict with 'state_dict') or a state dict");
}

// The hparams keys that size the tensor `name` (for the fix of a mismatch).
const char* sizing_keys(const std::string& name) {
  if (name.find("conv1x1c") != std::string::npos) return "cin_channels, gate_channels";
  if (name.find("conv1x1g") != std::string::npos) return "gin_channels, gate_channels";
  if (name.find("conv1x1_skip") != std::string::npos) return "gate_channels, skip_out_channels";
  if (name.find(".conv.") != std::string::npos) {
    return "residual_channels, gate_channels, kernel_size";
  }
  if (name.find("conv1x1_out") != std::string::npos) return "gate_channels, residual_channels";
  if (name.find("first_conv") != std::string::npos) return "residual_channels";
  if (name.find("last_conv_layers.1") != std::string::npos) return "skip_out_channels";
  if (name.find("last_conv_layers.3") != std::string::npos) return "out_channels";
  if (name.find("conv_in") != std::string::npos) return "num_mels, cin_pad";
  if (name.find("up_layers") != std::string::npos) {
    return "upsample_params.upsample_scales, upsample_params.freq_axis_kernel_size";
  }
  return "gin_channels, n_speakers";
}

std::string json_text(const std::string& text) { return fmt::format("\"{}\"", text); }
// A float-typed r9y9 hparam: always with a decimal point, as Python's json writes floats.
std::string json_real(double value) {
  std::string text = fmt::format("{}", value);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}
// An int-typed r9y9 hparam (fmin, fmax) given as a double: an integer where it is one.
std::string json_number(double value) {
  return value == std::floor(value) && std::abs(value) < 1e15
             ? fmt::format("{}", static_cast<int64_t>(value))
             : json_real(value);
}

}  // namespace

R9y9Hparams read_r9y9_hparams(const std::string& path) {
  Hparams h(path);
  R9y9Hparams out;
  out.audio = audio_options(h);
  out.wavenet = wavenet_options(h, out.audio.n_mels);
  int64_t hop = 1;
  for (int scale : out.wavenet.upsample_scales) hop *= scale;
  TTS_CHECK(hop == out.audio.hop_length,
            "{}: the product of 'upsample_params.upsample_scales' is {} but the hop size is {} "
            "samples; they must be equal (one mel frame per hop)",
            path, hop, out.audio.hop_length);
  models::cut_to_whole_frames(out.wavenet.max_time_steps, out.audio.hop_length, path,
                              "max_time_steps");
  models::require_parameter_budget(parameter_count(out.wavenet, out.audio.n_mels), path,
                                   kSizingKeys);
  return out;
}

std::map<std::string, torch::Tensor> wavenet_state_dict(torch::nn::Module& model) {
  std::map<std::string, torch::Tensor> out;
  for (const checkpoint::ModelTensor& t : checkpoint::model_tensors(model)) {
    out[t.name] = t.tensor;
  }
  return out;
}

void load_wavenet_state_dict(torch::nn::Module& model,
                             const std::map<std::string, torch::Tensor>& tensors,
                             const std::string& source) {
  checkpoint::StateDictOptions options;
  options.file = source;
  options.fix = [](const std::vector<checkpoint::TensorMatch>& mismatched) {
    std::set<std::string> keys;
    for (const auto& m : mismatched) keys.insert(sizing_keys(m.target.name));
    return fmt::format(
        "check the hparams against the checkpoint: {}; 'layers' for a different "
        "count of conv_layers",
        keys.empty() ? "the keys that size them" : fmt::format("{}", fmt::join(keys, "; ")));
  };
  torch::NoGradGuard no_grad;
  checkpoint::copy_matched(
      checkpoint::match_state_dict(checkpoint::model_tensors(model), tensors, options).matched);
}

WavenetImport import_r9y9(const std::string& checkpoint, const std::string& hparams_json) {
  R9y9Hparams hparams = read_r9y9_hparams(hparams_json);
  PickleValue root = formats::read_torch_file(checkpoint);
  WavenetImport out;
  out.tensors = file_tensors(root, checkpoint);
  out.wavenet = hparams.wavenet;
  out.audio = hparams.audio;
  out.wavenet.use_speaker_embedding = out.tensors.count("embed_speakers.weight") > 0;
  if (const PickleValue* step = root.find("global_step");
      step != nullptr && step->kind == PickleValue::Kind::Int) {
    out.global_step = step->integer;
  }
  // The hparams build the reference network whose every name and shape the file must match.
  WaveNet reference(out.wavenet, out.audio.n_mels);
  load_wavenet_state_dict(
      *reference, out.tensors,
      fmt::format("r9y9 checkpoint '{}' (hparams '{}')", checkpoint, hparams_json));
  for (auto& [name, tensor] : out.tensors) tensor = tensor.to(torch::kFloat).contiguous();
  return out;
}

void export_r9y9(const std::string& checkpoint, const std::string& hparams_json,
                 const config::WavenetOptions& w, const config::AudioOptions& a,
                 const std::map<std::string, torch::Tensor>& tensors, int64_t global_step) {
  w.validate();
  TTS_CHECK(a.preemphasis == 0 || a.preemphasis == kPreemphasis,
            "audio.preemphasis is {}; r9y9's preprocess 'preemphasis' uses {} (or 0 for none)",
            a.preemphasis, kPreemphasis);
  std::vector<std::pair<std::string, std::shared_ptr<PickleValue>>> state_dict;
  for (const auto& [name, tensor] : tensors) {
    state_dict.emplace_back(name, formats::pickle_tensor(tensor.detach().cpu().contiguous()));
  }
  const auto root = formats::pickle_dict({{"state_dict", formats::pickle_dict(state_dict)},
                                          {"global_step", formats::pickle_int(global_step)},
                                          {"global_epoch", formats::pickle_int(0)}});

  const std::string output =
      w.output_distribution == config::WavenetOutput::kLogistic ? "Logistic" : "Normal";
  const std::string json = fmt::format(
      R"({{
 "name": "wavenet_vocoder",
 "input_type": "raw",
 "quantize_channels": {},
 "preprocess": {},
 "postprocess": {},
 "sample_rate": {},
 "num_mels": {},
 "fmin": {},
 "fmax": {},
 "fft_size": {},
 "hop_size": {},
 "win_length": {},
 "output_distribution": "{}",
 "log_scale_min": {},
 "out_channels": {},
 "layers": {},
 "stacks": {},
 "residual_channels": {},
 "gate_channels": {},
 "skip_out_channels": {},
 "dropout": {},
 "kernel_size": {},
 "cin_channels": {},
 "cin_pad": {},
 "upsample_conditional_features": true,
 "upsample_net": "ConvInUpsampleNetwork",
 "upsample_params": {{
  "upsample_scales": [{}],
  "freq_axis_kernel_size": {},
  "cin_pad": {},
  "cin_channels": {}
 }},
 "gin_channels": {},
 "n_speakers": {},
 "max_time_steps": {},
 "exponential_moving_average": {},
 "ema_decay": {}
}}
)",
      w.quantize_channels, json_text(a.preemphasis > 0 ? "preemphasis" : ""),
      json_text(a.preemphasis > 0 ? "inv_preemphasis" : ""), a.sample_rate, a.n_mels,
      json_number(a.fmin), json_number(a.fmax), a.n_fft, a.hop_length, a.win_length, output,
      json_real(w.log_scale_min), w.out_channels, w.layers, w.stacks, w.residual_channels,
      w.gate_channels, w.skip_out_channels, json_real(w.dropout), w.kernel_size, a.n_mels,
      w.cin_pad, fmt::join(w.upsample_scales, ", "), w.freq_axis_kernel_size, w.cin_pad, a.n_mels,
      w.gin_channels > 0 ? w.gin_channels : -1, w.n_speakers, w.max_time_steps,
      w.exponential_moving_average ? "true" : "false", json_real(w.ema_decay));
  formats::write_torch_file(checkpoint, *root);
  write_file_atomic(hparams_json, json);
}

}  // namespace tts::wavenet
