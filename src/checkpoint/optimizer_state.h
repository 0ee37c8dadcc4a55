// Reading a checkpoint's values: its typed entries, and the import of the optimizer's state with
// the checks that keep a damaged or hostile file from training (the options of each Adam group,
// finite moments, second moments never negative; state_dict.h: require_adam_moments). Apart from
// checkpoint.cpp so that the fuzz harness of the import (tests/fuzz/fuzz_optimizer_state.cpp)
// links these checks and the pickle reader alone.
#pragma once

#include <string>
#include <vector>

#include "tts/checkpoint/checkpoint.h"
#include "tts/formats/torch_file.h"

namespace tts::checkpoint {

// The value under `key` of the checkpoint's dict `dict`, of kind `kind`; a tts::Error naming
// `path` and the key otherwise.
const formats::PickleValue& checkpoint_entry(const formats::PickleValue& dict,
                                             const std::string& key,
                                             formats::PickleValue::Kind kind,
                                             const std::string& path);

// The items of list `key`, each of kind `kind`.
std::vector<const formats::PickleValue*> checkpoint_list(const formats::PickleValue& dict,
                                                         const std::string& key,
                                                         formats::PickleValue::Kind kind,
                                                         const std::string& path);

// A checkpoint's "adam" dict (format 2: group_options, group_sizes, steps, exp_avg, exp_avg_sq,
// max_exp_avg_sq) as an OptimizerState. Throws tts::Error naming `path` and the group or
// parameter for lists that disagree, options no Adam takes (a NaN learning rate, a beta of 1),
// non-finite moments and negative second moments.
OptimizerState read_optimizer_state(const formats::PickleValue& adam, const std::string& path);

}  // namespace tts::checkpoint
