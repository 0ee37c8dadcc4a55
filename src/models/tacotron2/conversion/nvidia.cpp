#include "tts/models/tacotron2/conversion/nvidia.h"

#include <torch/torch.h>

#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "tts/checkpoint/state_dict.h"
#include "tts/checkpoint/state_dict_keys.h"
#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/formats/torch_file.h"
#include "tts/models/registry.h"
#include "tts/models/tacotron2/layers/network.h"
#include "tts/text/symbols.h"

namespace tts::tacotron2 {
// The checkpoint module's matcher, readers and names, unqualified.
using namespace checkpoint;  // NOLINT(google-build-using-namespace)
using formats::PickleValue;
namespace fs = std::filesystem;
namespace {

// Where a dimension of one of our tensors comes from in the config: size = value * per_unit.
struct ShapeRule {
  std::regex name;
  int64_t dim;
  const char* key;
  int64_t per_unit;  // tensor elements along `dim` per unit of the config value
};

const std::vector<ShapeRule>& shape_rules() {
  static const std::vector<ShapeRule> rules{
      {std::regex(R"(embedding\.weight)"), 1, "model.symbols_embedding_dim", 1},
      {std::regex(R"(encoder\.conv0\.weight)"), 1, "model.symbols_embedding_dim", 1},
      {std::regex(R"(encoder\.(conv|norm)\d+\..*)"), 0, "model.encoder_embedding_dim", 1},
      {std::regex(R"(encoder\.conv\d+\.weight)"), 2, "model.encoder_kernel_size", 1},
      {std::regex(R"(encoder\.lstm\.weight_hh.*)"), 1, "model.encoder_embedding_dim", 0},
      {std::regex(R"(decoder\.prenet\.layer\d\.weight)"), 0, "model.prenet_dim", 1},
      {std::regex(R"(decoder\.attention_rnn\.weight_hh)"), 1, "model.attention_rnn_dim", 1},
      {std::regex(R"(decoder\.attention_layer\.(query|memory)_layer\.weight)"), 0,
       "model.attention_dim", 1},
      {std::regex(R"(decoder\.attention_layer\.location_conv\.weight)"), 0,
       "model.attention_location_n_filters", 1},
      {std::regex(R"(decoder\.attention_layer\.location_conv\.weight)"), 2,
       "model.attention_location_kernel_size", 1},
      {std::regex(R"(decoder\.decoder_rnn\.weight_hh)"), 0, "model.decoder_rnn_dim", 4},
      {std::regex(R"(decoder\.decoder_rnn\.weight_hh)"), 1, "model.decoder_rnn_dim", 1},
      {std::regex(R"(decoder\.gate_layer\.(weight|bias))"), 0, "model.n_frames_per_step", 1},
      {std::regex(R"(postnet\.conv0\.weight)"), 1, "audio.n_mels", 1},
      {std::regex(R"(postnet\.(conv|norm)0\..*)"), 0, "model.postnet_embedding_dim", 1},
      {std::regex(R"(postnet\.conv\d+\.weight)"), 2, "model.postnet_kernel_size", 1},
  };
  return rules;
}

const char* dimension_word(int64_t dim) {
  static const char* const words[] = {"rows", "columns", "kernel taps"};
  return dim < 3 ? words[dim] : "elements";
}

// "model.decoder_rnn_dim is 512 but the checkpoint's decoder.decoder_rnn.weight_hh has 4096 rows:
// use 1024" for the first dimension of `ours` whose size differs and a rule explains; empty when
// none does.
std::string shape_hint(const std::string& ours, const std::string& theirs,
                       const torch::Tensor& model, const torch::Tensor& file) {
  if (ours == "embedding.weight" && model.size(0) != file.size(0)) {
    return fmt::format("text.symbol_set has {} symbols but the checkpoint's {} has {} rows: use {}",
                       model.size(0), theirs, file.size(0),
                       file.size(0) == text::symbol_count(config::SymbolSet::kNvidia)
                           ? "nvidia"
                           : "a symbol set of that size (or --init-skip embedding)");
  }
  for (const ShapeRule& rule : shape_rules()) {
    if (!std::regex_match(ours, rule.name) || rule.dim >= model.dim() ||
        model.size(rule.dim) == file.size(rule.dim)) {
      continue;
    }
    // per_unit 0: the BiLSTM's hidden size is half the encoder dimension.
    auto value = [&](int64_t size) { return rule.per_unit == 0 ? 2 * size : size / rule.per_unit; };
    return fmt::format("{} is {} but the checkpoint's {} has {} {}: use {}", rule.key,
                       value(model.size(rule.dim)), theirs, file.size(rule.dim),
                       dimension_word(rule.dim), value(file.size(rule.dim)));
  }
  return "";
}

}  // namespace

// The state dict inside what NVIDIA's train.py (or torch.save(model.state_dict())) wrote.
std::map<std::string, torch::Tensor> nvidia_state_dict(const PickleValue& root,
                                                       const std::string& path) {
  TTS_CHECK(root.find("format") == nullptr,
            "'{}' is a tts-train checkpoint, not one of NVIDIA's: use it as it is (train "
            "--resume / --init-from, synthesize, gta)",
            path);
  const PickleValue* dict = root.find("state_dict");
  return checkpoint::foreign_state_dict(
      dict != nullptr ? *dict : root, path,
      "NVIDIA's train.py checkpoint (a dict with 'state_dict') or a state dict");
}

std::string nvidia_name(const std::string& ours) {
  static const std::vector<std::pair<std::regex, std::string>> rules{
      {std::regex(R"(encoder\.conv(\d+)\.(.+))"), "encoder.convolutions.$1.0.conv.$2"},
      {std::regex(R"(encoder\.norm(\d+)\.(.+))"), "encoder.convolutions.$1.1.$2"},
      {std::regex(R"(postnet\.conv(\d+)\.(.+))"), "postnet.convolutions.$1.0.conv.$2"},
      {std::regex(R"(postnet\.norm(\d+)\.(.+))"), "postnet.convolutions.$1.1.$2"},
      {std::regex(R"(decoder\.prenet\.layer(\d+)\.(.+))"),
       "decoder.prenet.layers.$1.linear_layer.$2"},
      {std::regex(R"(decoder\.attention_layer\.(query_layer|memory_layer|v)\.(.+))"),
       "decoder.attention_layer.$1.linear_layer.$2"},
      {std::regex(R"(decoder\.attention_layer\.location_conv\.(.+))"),
       "decoder.attention_layer.location_layer.location_conv.conv.$1"},
      {std::regex(R"(decoder\.attention_layer\.location_dense\.(.+))"),
       "decoder.attention_layer.location_layer.location_dense.linear_layer.$1"},
      {std::regex(R"(decoder\.(linear_projection|gate_layer)\.(.+))"),
       "decoder.$1.linear_layer.$2"},
      {std::regex(R"((embedding|encoder\.lstm|decoder\.attention_rnn|decoder\.decoder_rnn)\..+)"),
       "$&"},
  };
  if (ours.rfind("linear_head.", 0) == 0) return "";
  if (ours.rfind("speaker_", 0) == 0) return "";  // NVIDIA's model has one speaker
  for (const auto& [pattern, replacement] : rules) {
    if (std::regex_match(ours, pattern)) return std::regex_replace(ours, pattern, replacement);
  }
  throw Error(
      fmt::format("nvidia_name: no NVIDIA name for our tensor '{}' (a tensor added to the "
                  "model needs its mapping in src/train/nvidia_checkpoint.cpp)",
                  ours));
}

std::map<std::string, torch::Tensor> read_nvidia_state_dict(const std::string& path) {
  return nvidia_state_dict(formats::read_torch_file(path), path);
}

Checkpoint import_nvidia(const std::string& path, const config::Config& config) {
  TTS_USAGE_CHECK(!config.model.predict_linear,
                  "model.predict_linear is true but NVIDIA's Tacotron-2 has no linear head, so "
                  "'{}' cannot fill it: set model.predict_linear: false to import (or warm-start "
                  "the mel part with train --init-from {} --init-skip linear_head)",
                  path, path);
  PickleValue root = formats::read_torch_file(path);
  std::map<std::string, torch::Tensor> file = nvidia_state_dict(root, path);
  std::vector<std::string> file_names;
  for (const auto& [name, tensor] : file) file_names.push_back(name);

  tacotron2::Tacotron2 model(config.model, text::symbol_count(config.text.symbol_set),
                             config.audio.n_mels, 0);
  // Layer counts that differ show as missing or unexpected names; say which key they need.
  std::vector<std::string> layer_hints;
  for (auto [prefix, key, configured] :
       {std::tuple<std::string, std::string, int>{"encoder.convolutions.",
                                                  "model.encoder_n_convolutions",
                                                  config.model.encoder_n_convolutions},
        {"postnet.convolutions.", "model.postnet_n_convolutions",
         config.model.postnet_n_convolutions}}) {
    int64_t found = layer_count(file_names, prefix, path);
    if (found > 0 && found != configured) {
      layer_hints.push_back(fmt::format("{} is {} but the checkpoint has {} such layers: use {}",
                                        key, configured, found, found));
    }
  }
  StateDictOptions options;
  options.file = fmt::format("NVIDIA/tacotron2 file '{}'", path);
  options.fix = [&](const std::vector<TensorMatch>& mismatched) {
    std::vector<std::string> hints;
    for (const TensorMatch& m : mismatched) {
      std::string hint = shape_hint(m.target.name, m.target.stored_name, m.target.tensor, m.stored);
      if (!hint.empty() && std::find(hints.begin(), hints.end(), hint) == hints.end()) {
        hints.push_back(hint);
      }
    }
    hints.insert(hints.end(), layer_hints.begin(), layer_hints.end());
    return hints.empty()
               ? std::string("is it NVIDIA/tacotron2's Tacotron-2 (names as its model.py)?")
               : fmt::format("fix the config: {}", fmt::join(hints, "; "));
  };
  Checkpoint checkpoint;
  for (const TensorMatch& m :
       match_state_dict(model_tensors(*model, nvidia_name), file, options).matched) {
    checkpoint.tensors.emplace_back(m.target.name,
                                    m.stored.to(m.target.tensor.dtype()).contiguous());
    if (m.target.parameter) checkpoint.parameter_names.push_back(m.target.name);
  }
  checkpoint.config_yaml = config::dump_config(config);
  // NVIDIA's ids are its symbols.py's: the embedding matched, so the config's set has its rows.
  checkpoint.symbols = text::symbol_table(config.text.symbol_set);
  if (const PickleValue* iteration = root.find("iteration");
      iteration != nullptr && iteration->kind == PickleValue::Kind::Int) {
    checkpoint.state.step = iteration->integer;
  }
  return checkpoint;
}

std::string nvidia_hparams(const config::Config& config) {
  const config::ModelOptions& m = config.model;
  const config::AudioOptions& a = config.audio;
  return fmt::format(
      "sampling_rate={},filter_length={},hop_length={},win_length={},n_mel_channels={},"
      "mel_fmin={},mel_fmax={},n_symbols={},symbols_embedding_dim={},encoder_kernel_size={},"
      "encoder_n_convolutions={},encoder_embedding_dim={},n_frames_per_step={},"
      "decoder_rnn_dim={},prenet_dim={},max_decoder_steps={},gate_threshold={},"
      "p_attention_dropout={},p_decoder_dropout={},attention_rnn_dim={},attention_dim={},"
      "attention_location_n_filters={},attention_location_kernel_size={},"
      "postnet_embedding_dim={},postnet_kernel_size={},postnet_n_convolutions={}",
      a.sample_rate, a.n_fft, a.hop_length, a.win_length, a.n_mels, a.fmin, a.fmax,
      text::symbol_count(config.text.symbol_set), m.symbols_embedding_dim, m.encoder_kernel_size,
      m.encoder_n_convolutions, m.encoder_embedding_dim, m.n_frames_per_step, m.decoder_rnn_dim,
      m.prenet_dim, m.max_decoder_steps, m.gate_threshold, m.p_attention_dropout,
      m.p_decoder_dropout, m.attention_rnn_dim, m.attention_dim, m.attention_location_n_filters,
      m.attention_location_kernel_size, m.postnet_embedding_dim, m.postnet_kernel_size,
      m.postnet_n_convolutions);
}

std::string export_nvidia(const Checkpoint& checkpoint, const std::string& out) {
  config::Config config = models::config_of(checkpoint, "the checkpoint");
  const int r = checkpoint_phase(checkpoint, config).r;
  TTS_USAGE_CHECK(r == 1,
                  "the checkpoint predicts {} frames per decoder step (model.n_frames_per_step, or "
                  "the r of train.r_schedule in force): NVIDIA's model.py "
                  "predicts one (its hparams.py says only 1 is supported), so this model cannot "
                  "be expressed in NVIDIA's code",
                  r);
  TTS_USAGE_CHECK(config.train.max_scheduled_r() <= 1,
                  "train.r_schedule reaches r = {}: the decoder's mel and stop projections predict "
                  "that many frames a step, which NVIDIA's model.py (one frame a step) cannot load",
                  config.train.max_scheduled_r());
  // NVIDIA's hparams name the r the model predicts, whatever the user's unused config value.
  config.model.n_frames_per_step = r;
  TTS_USAGE_CHECK(!config.model.predict_linear,
                  "model.predict_linear is true: NVIDIA's model has no linear (CBHG) head, so its "
                  "code cannot load or run this model");
  TTS_USAGE_CHECK(config.model.speakers == 0,
                  "model.speakers is {}: NVIDIA's model has one speaker and no speaker embedding, "
                  "so its code cannot load or run this model",
                  config.model.speakers);
  TTS_USAGE_CHECK(config.text.symbol_set == config::SymbolSet::kNvidia,
                  "text.symbol_set is '{}': NVIDIA's text_to_sequence gives the ids of its own "
                  "148-symbol table, which do not map onto this set's (ours end every sentence "
                  "with '~', which NVIDIA's has not), so the embedding would read the wrong rows; "
                  "train with text.symbol_set: nvidia (e.g. warm-started with --init-from) to "
                  "export",
                  config.text.symbol_set);
  std::vector<std::pair<std::string, std::shared_ptr<PickleValue>>> tensors;
  for (const auto& [name, tensor] : checkpoint.tensors) {
    tensors.emplace_back(nvidia_name(name), formats::pickle_tensor(tensor));
  }
  const auto root =
      formats::pickle_dict({{"iteration", formats::pickle_int(checkpoint.state.step)},
                            {"state_dict", formats::pickle_dict(tensors)},
                            {"learning_rate", formats::pickle_float(config.train.learning_rate)}});
  formats::write_torch_file(out, *root);
  return nvidia_hparams(config);
}

}  // namespace tts::tacotron2
