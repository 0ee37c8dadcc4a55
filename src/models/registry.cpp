#include "tts/models/registry.h"

#include <torch/torch.h>

#include "tts/core/error.h"
#include "tts/models/hifigan/training/family.h"
#include "tts/models/tacotron2/training/family.h"
#include "tts/models/wavenet/training/family.h"

namespace tts::models {

const FamilyEntry& family(config::ModelKind kind) {
  // One line per family: its entry, filled in its own folder.
  static const FamilyEntry kTacotron2 = tacotron2::entry();
  static const FamilyEntry kHifigan = hifigan::entry();
  static const FamilyEntry kWavenet = wavenet::entry();
  switch (kind) {
    case config::ModelKind::kTacotron2:
      return kTacotron2;
    case config::ModelKind::kHifigan:
      return kHifigan;
    case config::ModelKind::kWavenet:
      return kWavenet;
  }
  throw Error(fmt::format("model.kind {}: no family is registered for it", kind));
}

const std::vector<config::ModelKind>& kinds() {
  static const std::vector<config::ModelKind> kinds = [] {
    std::vector<config::ModelKind> all;
    for (const auto& [kind, name] : config::ChoiceNames<config::ModelKind>::names) {
      all.push_back(kind);
    }
    return all;
  }();
  return kinds;
}

config::Config config_of(const checkpoint::Checkpoint& checkpoint, const std::string& source) {
  config::Config config = checkpoint::checkpoint_config(checkpoint, source);
  const FamilyEntry& entry = family(config.model.kind);
  if (!entry.check_size) return config;
  const std::string where = source + " (config)";
  int64_t stored_values = 0;
  for (const auto& [name, tensor] : checkpoint.tensors) stored_values += tensor.numel();
  try {
    entry.check_size(config, stored_values, source);
  } catch (const Error& e) {
    const std::string message = e.what();
    throw Error(message.rfind(where, 0) == 0 ? message : where + ": " + message);
  }
  return config;
}

TrainedCheckpoint read_trained(const std::string& path, checkpoint::CheckpointRead read) {
  TrainedCheckpoint trained;
  trained.checkpoint = checkpoint::load_newest_checkpoint(path, &trained.source, read);
  trained.config = config_of(trained.checkpoint, trained.source);
  return trained;
}

std::unique_ptr<Vocoder> load_vocoder(const std::string& path, const torch::Device& device) {
  TrainedCheckpoint trained = read_trained(path);
  const config::ModelKind kind = trained.config.model.kind;
  const FamilyEntry& entry = family(kind);
  if (!entry.load_vocoder) {
    std::vector<std::string> vocoders;
    for (config::ModelKind other : kinds()) {
      if (family(other).load_vocoder) vocoders.push_back(fmt::format("{}", other));
    }
    throw UsageError(fmt::format(
        "{} is a model.kind {} checkpoint, not a vocoder{}; a vocoder is a checkpoint of "
        "model.kind {}",
        trained.source, kind,
        entry.acoustic.synthesize
            ? fmt::format(": it speaks text, with tts-train synthesize --checkpoint {} --text "
                          "\"...\" (a vocoder voices its mels there with --vocoder VOC)",
                          trained.source)
            : std::string(),
        fmt::join(vocoders, " or ")));
  }
  return entry.load_vocoder(trained, device);
}

const Converter& converter(const std::string& format) {
  std::vector<std::string> formats;
  for (config::ModelKind kind : kinds()) {
    for (const Converter& candidate : family(kind).converters) {
      if (candidate.format == format) return candidate;
      formats.push_back(candidate.format);
    }
  }
  throw UsageError(fmt::format("convert: unknown format '{}': expected one of {}", format,
                               fmt::join(formats, ", ")));
}

std::vector<std::pair<std::string, config::ModelKind>> converter_formats() {
  std::vector<std::pair<std::string, config::ModelKind>> formats;
  for (config::ModelKind kind : kinds()) {
    for (const Converter& candidate : family(kind).converters) {
      formats.emplace_back(candidate.format, kind);
    }
  }
  return formats;
}

}  // namespace tts::models
