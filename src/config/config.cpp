#include "tts/config/config.h"

#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>
#include <type_traits>
#include <utility>

#include "tts/core/error.h"
#include "tts/core/json_writer.h"
#include "tts/core/logging.h"

namespace tts::config {
namespace {

// ---- type names and conversions ----------------------------------------------------------

template <class>
inline constexpr bool kUnsupportedField = false;

template <class T>
const char* type_name() {
  if constexpr (std::is_same_v<T, bool>) {
    return "a boolean (true/false)";
  } else if constexpr (std::is_same_v<T, int> || std::is_same_v<T, int64_t>) {
    return "an integer";
  } else if constexpr (std::is_same_v<T, double>) {
    return "a number";
  } else if constexpr (std::is_same_v<T, std::string>) {
    return "a string";
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    return "a list of strings";
  } else if constexpr (std::is_same_v<T, std::vector<int>>) {
    return "a list of integers";
  } else if constexpr (std::is_same_v<T, std::vector<double>>) {
    return "a list of numbers";
  } else if constexpr (std::is_same_v<T, std::vector<RScheduleRow>>) {
    return "a list of [from_step, r, batch_size] rows of integers";
  } else if constexpr (std::is_same_v<T, std::vector<std::vector<int>>>) {
    return "a list of lists of integers ([[1, 3, 5], [1, 3, 5]])";
  } else {
    static_assert(kUnsupportedField<T>, "a config field of a type the parser does not read");
  }
}

// What a message shows of a value from a file: a node can be a megabyte long, or nest thousands
// deep through aliases (yaml-cpp's emitter recurses once per level), so its text is written by
// hand, at most kShownLevels deep and cut after about kShownChars characters.
constexpr int kShownLevels = 3;
constexpr size_t kShownChars = 120;

void show(const YAML::Node& node, int levels, std::string& out) {
  if (out.size() > kShownChars) return;
  if (node.IsScalar()) {
    out += node.Scalar().substr(0, kShownChars);
    return;
  }
  if (!node.IsSequence() && !node.IsMap()) {
    out += "~";
    return;
  }
  const bool map = node.IsMap();
  if (levels == 0) {
    out += map ? "{...}" : "[...]";
    return;
  }
  out += map ? "{" : "[";
  bool first = true;
  for (const auto& item : node) {
    if (!first) out += ", ";
    first = false;
    if (out.size() > kShownChars) break;
    if (map) {
      show(item.first, levels - 1, out);
      out += ": ";
      show(item.second, levels - 1, out);
    } else {
      show(item, levels - 1, out);
    }
  }
  out += map ? "}" : "]";
}

std::string describe(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing (an empty value)";
  std::string text;
  show(node, kShownLevels, text);
  if (text.size() > kShownChars) text = text.substr(0, kShownChars) + "...";
  if (node.IsScalar()) return fmt::format("'{}'", text);
  return fmt::format("{} '{}'", node.IsSequence() ? "a list" : "a mapping", text);
}

template <class T>
bool convert_scalar(const YAML::Node& node, T& out) {
  if (!node.IsScalar()) return false;
  try {
    if constexpr (std::is_same_v<T, std::string>) {
      out = node.Scalar();
    } else if constexpr (std::is_same_v<T, double>) {
      out = node.as<double>();
    } else {
      out = node.as<T>();
    }
    return true;
  } catch (const YAML::Exception&) {
    return false;
  }
}

template <class T>
bool convert(const YAML::Node& node, T& out) {
  if constexpr (std::is_same_v<T, std::vector<std::string>> ||
                std::is_same_v<T, std::vector<int>> || std::is_same_v<T, std::vector<double>>) {
    T values;
    if (node.IsScalar()) {  // a single value stands for a one-element list
      typename T::value_type value;
      if (!convert_scalar(node, value)) return false;
      values.push_back(value);
    } else if (node.IsSequence()) {
      for (const auto& item : node) {
        typename T::value_type value;
        if (!convert_scalar(item, value)) return false;
        values.push_back(value);
      }
    } else {
      return false;
    }
    out = std::move(values);
    return true;
  } else if constexpr (std::is_same_v<T, std::vector<std::vector<int>>>) {
    if (!node.IsSequence()) return false;
    T lists;
    for (const auto& item : node) {
      if (!item.IsSequence()) return false;  // [1, 3] is ambiguous: one list or two?
      std::vector<int> list;
      if (!convert(item, list)) return false;
      lists.push_back(std::move(list));
    }
    out = std::move(lists);
    return true;
  } else if constexpr (std::is_same_v<T, std::vector<RScheduleRow>>) {
    if (!node.IsSequence()) return false;
    T rows;
    for (const auto& item : node) {
      if (!item.IsSequence()) return false;  // [a, b, c] is ambiguous: one row or three?
      std::vector<int> row;
      if (!convert(item, row) || row.size() != 3) return false;
      rows.push_back({row[0], row[1], row[2]});
    }
    out = std::move(rows);
    return true;
  } else {
    return convert_scalar(node, out);
  }
}

// Shortest text that reads back to the same value.
template <class T>
std::string format_value(const T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    return value ? "true" : "false";
  } else if constexpr (std::is_same_v<T, double>) {
    std::string text = fmt::format("{}", value);                        // shortest round-trip form
    if (text.find_first_of(".eEn") == std::string::npos) text += ".0";  // shown as a number
    return text;
  } else {
    return fmt::format("{}", value);
  }
}

// ---- visitors ------------------------------------------------------------------------------

// Sets the field `key` of one section from a YAML node.
struct FieldSetter {
  const std::string& path;  // "audio.n_fft"
  const std::string& key;
  const YAML::Node& node;
  const std::string& where;  // "config.yaml line 4" or "--set audio.n_fft=x"
  bool found = false;

  template <class T>
  void operator()(const char* name, T& field, const char*) {
    if (found || key != name) return;
    found = true;
    if constexpr (is_choice_v<T>) {
      std::optional<T> value;
      if (node.IsScalar()) value = parse_choice<T>(node.Scalar());
      if (!value) {
        throw UsageError(fmt::format("{}: {}: expected one of {}, found {}", where, path,
                                     fmt::join(choice_names<T>(), ", "), describe(node)));
      }
      field = *value;
    } else if constexpr (is_choice_list_v<T>) {
      using E = typename T::value_type;
      // One name stands for a one-item list, as for lists of strings.
      if (!node.IsScalar() && !node.IsSequence()) {
        throw UsageError(fmt::format("{}: {}: expected a list of {}, found {}", where, path,
                                     fmt::join(choice_names<E>(), ", "), describe(node)));
      }
      std::vector<YAML::Node> items;
      if (node.IsScalar()) items.push_back(node);
      if (node.IsSequence()) {
        for (const auto& item : node) items.push_back(item);
      }
      T values;
      for (const YAML::Node& item : items) {
        std::optional<E> value;
        if (item.IsScalar()) value = parse_choice<E>(item.Scalar());
        if (!value) {
          throw UsageError(
              fmt::format("{}: {}: expected a list of {}, found {}{}", where, path,
                          fmt::join(choice_names<E>(), ", "), describe(node),
                          item.IsScalar() ? fmt::format(" ('{}' is not one of them)", item.Scalar())
                                          : std::string()));
        }
        values.push_back(*value);
      }
      field = std::move(values);
    } else if (!convert(node, field)) {
      throw UsageError(fmt::format("{}: {}: expected {}, found {}", where, path, type_name<T>(),
                                   describe(node)));
    }
  }
};

// Finds the section named `section` and hands it to `fn(options)`.
template <class Fn>
struct SectionFinder {
  const std::string& wanted;
  Fn fn;
  bool found = false;

  template <class Options>
  void section(const char* name, Options& options) {
    if (found || wanted != name) return;
    found = true;
    fn(options);
  }
};

struct KeyLister {
  std::vector<std::string> keys;
  std::vector<std::string> sections;
  std::string current;

  template <class Options>
  void section(const char* name, Options& options) {
    current = name;
    sections.push_back(name);
    options.visit(*this);
  }
  template <class T>
  void operator()(const char* name, T&, const char*) {
    keys.push_back(current + "." + name);
  }
};

struct Dumper {
  YAML::Emitter& out;
  std::vector<std::string> skip_sections;  // ignored when `only_sections` is not empty
  std::vector<std::string> only_sections;

  bool wanted(const char* name) const {
    auto contains = [name](const std::vector<std::string>& list) {
      return std::find(list.begin(), list.end(), name) != list.end();
    };
    return only_sections.empty() ? !contains(skip_sections) : contains(only_sections);
  }

  template <class Options>
  void section(const char* name, Options& options) {
    if (!wanted(name)) return;
    out << YAML::Key << name << YAML::Value << YAML::BeginMap;
    options.visit(*this);
    out << YAML::EndMap;
  }
  template <class T>
  void operator()(const char* name, const T& value, const char* comment) {
    out << YAML::Key << name << YAML::Value;
    if constexpr (std::is_same_v<T, std::string>) {
      out << value;
    } else if constexpr (is_choice_v<T>) {
      out << std::string(choice_name(value));
    } else if constexpr (is_choice_list_v<T>) {
      out << YAML::Flow << YAML::BeginSeq;
      for (const auto& item : value) out << std::string(choice_name(item));
      out << YAML::EndSeq;
    } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
      out << YAML::Flow << YAML::BeginSeq;
      for (const auto& item : value) out << item;
      out << YAML::EndSeq;
    } else if constexpr (std::is_same_v<T, std::vector<int>> ||
                         std::is_same_v<T, std::vector<double>>) {
      out << YAML::Flow << YAML::BeginSeq;
      for (const auto& item : value) out << format_value(item);
      out << YAML::EndSeq;
    } else if constexpr (std::is_same_v<T, std::vector<std::vector<int>>>) {
      out << YAML::Flow << YAML::BeginSeq;
      for (const std::vector<int>& list : value) {
        out << YAML::BeginSeq;
        for (int item : list) out << item;
        out << YAML::EndSeq;
      }
      out << YAML::EndSeq;
    } else if constexpr (std::is_same_v<T, std::vector<RScheduleRow>>) {
      out << YAML::Flow << YAML::BeginSeq;
      for (const RScheduleRow& row : value) {
        out << YAML::BeginSeq << row.from_step << row.r << row.batch_size << YAML::EndSeq;
      }
      out << YAML::EndSeq;
    } else {
      out << format_value(value);
    }
    out << YAML::Comment(comment);
  }
};

template <class T>
struct is_list : std::false_type {};
template <class T>
struct is_list<std::vector<T>> : std::true_type {};
template <class T>
inline constexpr bool is_list_v = is_list<T>::value;

// Lists every field's value as text and as JSON.
struct ValueLister {
  std::vector<FieldValue> fields;
  std::string current;

  template <class Options>
  void section(const char* name, Options& options) {
    current = name;
    options.visit(*this);
  }
  template <class T>
  void operator()(const char* name, const T& value, const char*) {
    fields.push_back({current + "." + name, text_of(value), json_of(value)});
  }

  template <class T>
  static std::string text_of(const T& value) {
    if constexpr (std::is_same_v<T, std::string>) {
      return value;
    } else if constexpr (is_choice_v<T>) {
      return std::string(choice_name(value));
    } else if constexpr (std::is_same_v<T, RScheduleRow>) {
      return fmt::format("[{}, {}, {}]", value.from_step, value.r, value.batch_size);
    } else if constexpr (is_choice_list_v<T> || is_list_v<T>) {
      std::vector<std::string> items;
      for (const auto& item : value) items.push_back(text_of(item));
      return fmt::format("[{}]", fmt::join(items, ", "));
    } else {
      return format_value(value);
    }
  }
  template <class T>
  static std::string json_of(const T& value) {
    if constexpr (std::is_same_v<T, std::string>) {
      return json_string(value);
    } else if constexpr (is_choice_v<T>) {
      return json_string(choice_name(value));
    } else if constexpr (std::is_same_v<T, double>) {
      return std::isfinite(value) ? format_value(value) : "null";
    } else if constexpr (std::is_same_v<T, RScheduleRow>) {
      return text_of(value);
    } else if constexpr (is_choice_list_v<T> || is_list_v<T>) {
      std::vector<std::string> items;
      for (const auto& item : value) items.push_back(json_of(item));
      return fmt::format("[{}]", fmt::join(items, ", "));
    } else {
      return format_value(value);
    }
  }
};

// ---- suggestions -----------------------------------------------------------------------------

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t substitution = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitution});
    }
  }
  return row[b.size()];
}

std::string last_component(const std::string& path) {
  auto dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

// The part of a key before its last dot ("model" of "model.speakers"); "" for a bare name.
std::string section_of(const std::string& path) {
  auto dot = path.rfind('.');
  return dot == std::string::npos ? "" : path.substr(0, dot);
}

// The candidate nearest to `wanted` among those `in` accepts, and its distance: the whole key's
// edit distance, or its last component's (a key that exists under another section,
// "audio.batch_size", is matched by its last component).
template <class In>
std::pair<std::string, size_t> nearest(const std::string& wanted,
                                       const std::vector<std::string>& candidates, In in) {
  std::string best;
  size_t best_distance = std::string::npos;
  for (const auto& candidate : candidates) {
    if (!in(candidate)) continue;
    size_t distance = std::min(edit_distance(wanted, candidate),
                               edit_distance(last_component(wanted), last_component(candidate)));
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return {best, best_distance};
}

// " did you mean X?" for the candidate nearest to `wanted`, or "" when none is close: first
// within `wanted`'s own section ("model.speaker" -> model.speakers, not data.speaker), then
// anywhere.
std::string suggestion(const std::string& wanted, const std::vector<std::string>& candidates) {
  const size_t tolerance = std::max<size_t>(2, last_component(wanted).size() / 3);
  const std::string section = section_of(wanted);
  auto [best, distance] = nearest(wanted, candidates, [&](const std::string& candidate) {
    return !section.empty() && section_of(candidate) == section;
  });
  if (best.empty() || distance > tolerance) {
    std::tie(best, distance) = nearest(wanted, candidates, [](const std::string&) { return true; });
  }
  if (best.empty() || distance > tolerance) return "";
  return fmt::format("; did you mean {}?", best);
}

KeyLister list_keys() {
  KeyLister lister;
  Config config;
  config.visit_sections(lister);
  return lister;
}

void require_known_section(const std::string& section, const std::string& where) {
  KeyLister known = list_keys();
  if (std::find(known.sections.begin(), known.sections.end(), section) == known.sections.end()) {
    throw UsageError(fmt::format("{}: unknown section '{}'{} (sections: {})", where, section,
                                 suggestion(section, known.sections),
                                 fmt::join(known.sections, ", ")));
  }
}

// Where each key got its value ("config.yaml line 4", "--set train.batch_size=8"), for the errors
// of validation.
using SetAt = std::map<std::string, std::string>;

// Sets section.key from `node` and records `where` in `set_at`; throws UsageError for an unknown
// section or key.
// Keys that moved to another section. A file or --set naming the old key still sets the new one,
// with a warning that names both, so configs and checkpoints written before the move keep working.
struct MovedKey {
  const char* old_path;
  const char* section;
  const char* key;
};
// train.step_products and train.decoder_step: Tacotron-2's own settings, now in its section.
constexpr MovedKey kMovedKeys[] = {
    {"train.step_products", "model", "recurrent_products"},
    {"train.decoder_step", "model", "decoder_step"},
};

void set_field(Config& config, const std::string& section, const std::string& key,
               const YAML::Node& node, const std::string& where, SetAt& set_at) {
  std::string path = section + "." + key;
  for (const MovedKey& moved : kMovedKeys) {
    if (path != moved.old_path) continue;
    // Once per key and process: every checkpoint written before the move names both keys.
    static std::atomic<bool> warned[std::size(kMovedKeys)];
    if (!warned[&moved - kMovedKeys].exchange(true)) {
      log::get("config")->warn("{}: {} has moved to {}.{}; read as that key", where, path,
                               moved.section, moved.key);
    }
    set_field(config, moved.section, moved.key, node, where, set_at);
    return;
  }
  bool key_found = false;
  auto apply = [&](auto& options) {
    FieldSetter setter{path, key, node, where};
    options.visit(setter);
    key_found = setter.found;
  };
  require_known_section(section, where);
  SectionFinder<decltype(apply)> finder{section, apply};
  config.visit_sections(finder);
  if (!key_found) {
    throw UsageError(
        fmt::format("{}: {}: unknown key{}", where, path, suggestion(path, list_keys().keys)));
  }
  set_at[path] = where;
}

// Config::validate(), its error prefixed with where the broken key was set (the source when the
// key kept its default).
void validate_set(const Config& config, const SetAt& set_at, const std::string& source) {
  try {
    config.validate();
  } catch (const RuleError& e) {
    auto it = set_at.find(e.key());
    throw UsageError(fmt::format("{}: {}", it != set_at.end() ? it->second : source, e.what()));
  }
}

std::string dump_selected(const Config& config, std::vector<std::string> skip_sections,
                          std::vector<std::string> only_sections = {}) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  Dumper dumper{out, std::move(skip_sections), std::move(only_sections)};
  const_cast<Config&>(config).visit_sections(dumper);
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace

namespace {

// Sets the fields of `root`'s sections: every section when `only` is empty (an unknown one is
// refused), else only the sections it names (other top-level keys are not config).
void apply_yaml(Config& config, const YAML::Node& root, const std::string& source,
                const std::vector<std::string>& only, SetAt& set_at) {
  if (!root.IsDefined() || root.IsNull()) return;
  if (!root.IsMap()) {
    throw UsageError(
        fmt::format("{}: expected a mapping of sections (audio:, text:, data:, model:, train:, "
                    "distributed:, logging:), found {}",
                    source, describe(root)));
  }
  for (const auto& section_entry : root) {
    std::string section = section_entry.first.Scalar();
    if (!only.empty() && std::find(only.begin(), only.end(), section) == only.end()) continue;
    std::string section_where =
        fmt::format("{} line {}", source, section_entry.first.Mark().line + 1);
    const YAML::Node& body = section_entry.second;
    require_known_section(section, section_where);
    if (body.IsNull()) continue;  // an empty section keeps its defaults
    if (!body.IsMap()) {
      throw UsageError(fmt::format("{}: section '{}' must be a mapping of keys, found {}",
                                   section_where, section, describe(body)));
    }
    for (const auto& entry : body) {
      std::string where = fmt::format("{} line {}", source, entry.first.Mark().line + 1);
      set_field(config, section, entry.first.Scalar(), entry.second, where, set_at);
    }
  }
}

YAML::Node load_yaml(const std::string& yaml_text, const std::string& source) {
  try {
    return YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw UsageError(fmt::format("{} line {}, column {}: not valid YAML: {}", source,
                                 e.mark.line + 1, e.mark.column + 1, e.msg));
  }
}

// Applies one "section.key=value" override, recording it in `set_at`.
void override_field(Config& config, const std::string& assignment, SetAt& set_at) {
  std::string where = fmt::format("--set {}", assignment);
  auto equals = assignment.find('=');
  auto dot = assignment.find('.');
  if (equals == std::string::npos || dot == std::string::npos || dot > equals) {
    throw UsageError(
        fmt::format("{}: expected section.key=value, e.g. --set train.batch_size=32", where));
  }
  std::string section = assignment.substr(0, dot);
  std::string key = assignment.substr(dot + 1, equals - dot - 1);
  std::string value = assignment.substr(equals + 1);
  YAML::Node node;
  try {
    node = YAML::Load(value);
  } catch (const YAML::Exception& e) {
    throw UsageError(fmt::format("{}: the value is not valid YAML: {}", where, e.msg));
  }
  set_field(config, section, key, node, where, set_at);
}

}  // namespace

Config parse_config(const std::string& yaml_text, const std::string& source,
                    const std::vector<std::string>& overrides) {
  Config config;
  SetAt set_at;
  apply_yaml(config, load_yaml(yaml_text, source), source, {}, set_at);
  for (const auto& assignment : overrides) override_field(config, assignment, set_at);
  validate_set(config, set_at, source);
  return config;
}

Config parse_config_sections(const std::string& yaml_text, const std::string& source,
                             const std::vector<std::string>& sections) {
  Config config;
  SetAt set_at;
  apply_yaml(config, load_yaml(yaml_text, source), source, sections, set_at);
  validate_set(config, set_at, source);
  return config;
}

Config load_config(const std::string& path, const std::vector<std::string>& overrides) {
  if (path.empty()) return parse_config("", "(defaults)", overrides);
  std::ifstream in(path);
  if (!in) {
    throw UsageError(
        fmt::format("cannot read config file '{}': {}; pass an existing YAML file "
                    "such as one of configs/",
                    path, std::strerror(errno)));
  }
  std::stringstream text;
  text << in.rdbuf();
  return parse_config(text.str(), path, overrides);
}

void apply_override(Config& config, const std::string& assignment) {
  SetAt set_at;
  override_field(config, assignment, set_at);
}

std::string dump_config(const Config& config) {
  return fmt::format("# tts-train {} resolved config\n", TTS_VERSION) + dump_selected(config, {});
}

std::string dump_sections(const Config& config, const std::vector<std::string>& sections) {
  return dump_selected(config, {}, sections);
}

std::vector<FieldValue> field_values(const Config& config) {
  ValueLister lister;
  const_cast<Config&>(config).visit_sections(lister);
  return std::move(lister.fields);
}

std::string fingerprint(const Config& config) {
  std::string text = dump_selected(config, {"logging"});
  uint64_t hash = 1469598103934665603ULL;  // FNV-1a, 64 bit
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  return fmt::format("{:016x}", hash);
}

std::vector<std::string> all_keys() { return list_keys().keys; }

bool operator==(const Config& a, const Config& b) {
  return dump_selected(a, {}) == dump_selected(b, {});
}

void Config::validate() const {
  audio.validate();
  text.validate();
  data.validate();
  train.validate();
  distributed.validate();
  logging.validate();
  validate_families(model, *this, audio, train);
}

}  // namespace tts::config
