// The whole typed configuration of tts-train: one options struct per section, parsed from YAML
// in one place, overridable with `--set section.key=value`, validated, and dumped back to YAML
// (with every default filled in) so that a run's config.yaml reloads to the same Config.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tts/config/audio_options.h"
#include "tts/config/data_options.h"
#include "tts/config/distributed_options.h"
#include "tts/config/logging_options.h"
#include "tts/config/text_options.h"
#include "tts/config/train_options.h"
#include "tts/models/family_sections.h"

namespace tts::config {

// The family sections (models/family_sections.h) are members by inheritance: config.hifigan,
// config.wavenet.
struct Config : FamilySections {
  AudioOptions audio;
  TextOptions text;
  DataOptions data;
  ModelOptions model;
  TrainOptions train;
  DistributedOptions distributed;
  LoggingOptions logging;

  template <class V>
  void visit_sections(V& v) {
    v.section("audio", audio);
    v.section("text", text);
    v.section("data", data);
    v.section("model", model);
    visit_family_sections(v);
    v.section("train", train);
    v.section("distributed", distributed);
    v.section("logging", logging);
  }

  // Every section's rules, then the rules of the family model.kind names
  // (models/family_sections.h). Throws UsageError with the key path.
  void validate() const;
};

// Parses YAML text (sections may be omitted; missing keys keep their defaults), applies
// `overrides` ("train.batch_size=32") in order, then validates. `source` names the text in
// errors (a file path). Throws UsageError.
Config parse_config(const std::string& yaml_text, const std::string& source,
                    const std::vector<std::string>& overrides = {});

// Like parse_config() without overrides, reading only the named top-level sections and ignoring
// the other keys (a feature store's features.yaml records audio and text beside its counts).
Config parse_config_sections(const std::string& yaml_text, const std::string& source,
                             const std::vector<std::string>& sections);

// Reads and parses a YAML file; an empty `path` means all defaults.
Config load_config(const std::string& path, const std::vector<std::string>& overrides = {});

// Applies one "section.key=value" override (value is parsed as YAML: 32, true, [a, b]).
void apply_override(Config& config, const std::string& assignment);

// The fully resolved config as YAML, every field with its comment. Loads back to an equal Config.
std::string dump_config(const Config& config);

// Only the named sections ("audio", "text"), as YAML that parse_config() reads back (the other
// sections keep their defaults). The feature store records its settings this way.
std::string dump_sections(const Config& config, const std::vector<std::string>& sections);

// One resolved field: its key path ("audio.n_fft") and its value as YAML writes it (1024,
// [english_cleaners], [[0, 2, 32]]) and as JSON (strings quoted; a number that is not finite is
// null).
struct FieldValue {
  std::string key;
  std::string text;
  std::string json;
};

// Every field of `config`, in declaration order (`inspect` shows them).
std::vector<FieldValue> field_values(const Config& config);

// A stable 64-bit hash (hex) of dump_config() without `logging`: equal on every rank of a run.
std::string fingerprint(const Config& config);

// All full key paths ("audio.n_fft", ...), in declaration order.
std::vector<std::string> all_keys();

bool operator==(const Config& a, const Config& b);
inline bool operator!=(const Config& a, const Config& b) { return !(a == b); }

}  // namespace tts::config
