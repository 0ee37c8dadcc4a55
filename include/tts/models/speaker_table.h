// A model's speaker table (Note: speakers are data, like symbols): the names its speaker
// embedding rows stand for, in row order, which its checkpoints record (Checkpoint::speakers).
// What a family of several speakers does with it when training from a store, resuming, and
// choosing a voice by name for inference: the one home of these rules for every family (Tacotron-2,
// WaveNet, the vocoders), each naming its own row-count setting (`field`, e.g. model.speakers).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tts/data/feature_store.h"

namespace tts::models {

// The table a run from scratch trains with: the store's speakers in name order (their store ids).
// Throws UsageError when the store has more speakers than the model's `rows` (`field`, e.g.
// "wavenet.n_speakers"), naming both counts and the fix.
std::vector<std::string> store_speaker_table(const data::FeatureStore& store, int64_t rows,
                                             const std::string& field);

// On resuming: the checkpoint's `table` (it may order the speakers otherwise than the store),
// after checking that it fits `rows` and names every speaker of `store_table`. Throws tts::Error
// naming the store's speakers it lacks and the fix.
std::vector<std::string> resumed_speaker_table(const std::vector<std::string>& table,
                                               const std::vector<std::string>& store_table,
                                               int64_t rows, const std::string& field);

// The row of speaker `name` in `table` (--speaker NAME) of the model read from `source`. A table of
// one speaker takes no name too. Throws UsageError for no name or an unknown one, listing the
// table's names.
int64_t speaker_row_by_name(const std::vector<std::string>& table, const std::string& name,
                            const std::string& source);

}  // namespace tts::models
