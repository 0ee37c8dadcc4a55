#include "tts/models/speaker_table.h"

#include <algorithm>

#include "tts/core/error.h"

namespace tts::models {

std::vector<std::string> store_speaker_table(const data::FeatureStore& store, int64_t rows,
                                             const std::string& field) {
  const std::vector<data::StoreSpeaker>& speakers = store.speakers();
  TTS_USAGE_CHECK(static_cast<int64_t>(speakers.size()) <= rows,
                  "the store has {} speakers but {} is {}: set {} to at least {}", speakers.size(),
                  field, rows, field, speakers.size());
  std::vector<std::string> names;
  for (const data::StoreSpeaker& speaker : speakers) names.push_back(speaker.name);
  return names;
}

std::vector<std::string> resumed_speaker_table(const std::vector<std::string>& table,
                                               const std::vector<std::string>& store_table,
                                               int64_t rows, const std::string& field) {
  TTS_CHECK(static_cast<int64_t>(table.size()) <= rows,
            "the checkpoint names {} speakers for a speaker embedding of {} rows ({})",
            table.size(), rows, field);
  TTS_CHECK(!table.empty() || store_table.empty(),
            "the checkpoint of a model of {} speakers ({}) has no speaker table: its rows cannot "
            "be matched to the store's speakers; start a new run from it (train --init-from)",
            rows, field);
  std::vector<std::string> missing;
  for (const std::string& name : store_table) {
    if (std::find(table.begin(), table.end(), name) == table.end()) missing.push_back(name);
  }
  TTS_CHECK(missing.empty(),
            "the store has {} speaker(s) the checkpoint's speaker table lacks: {} (its table: "
            "{}); resume with the store it trained on, or start a new run from it (train "
            "--init-from)",
            missing.size(), fmt::join(missing, ", "), fmt::join(table, ", "));
  return table;
}

int64_t speaker_row_by_name(const std::vector<std::string>& table, const std::string& name,
                            const std::string& source) {
  if (name.empty() && table.size() == 1) return 0;
  const auto found = std::find(table.begin(), table.end(), name);
  TTS_USAGE_CHECK(found != table.end(), "{} speaks as {} speakers: {} one with --speaker NAME: {}",
                  source, table.size(),
                  name.empty() ? "choose" : "'" + name + "' is not one; choose",
                  fmt::format("{}", fmt::join(table, ", ")));
  return static_cast<int64_t>(found - table.begin());
}

}  // namespace tts::models
