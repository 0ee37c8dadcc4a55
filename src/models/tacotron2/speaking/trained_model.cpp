#include "tts/models/tacotron2/speaking/trained_model.h"

#include "tts/checkpoint/checkpoint.h"
#include "tts/core/error.h"
#include "tts/models/registry.h"
#include "tts/models/speaker_table.h"
#include "tts/models/tacotron2/training/precision.h"
#include "tts/text/symbols.h"
#include "tts/text/text_processor.h"

namespace tts::tacotron2 {

TrainedModel load_trained_model(const std::string& path, const torch::Device& device) {
  return trained_model(models::read_trained(path), device);
}

TrainedModel trained_model(const models::TrainedCheckpoint& read, const torch::Device& device) {
  TrainedModel trained;
  const checkpoint::Checkpoint& checkpoint = read.checkpoint;
  trained.source = read.source;
  trained.config = read.config;
  trained.phase = checkpoint::checkpoint_phase(checkpoint, trained.config);
  trained.step = checkpoint.state.step;
  train::apply_tf32(trained.config.train.tf32);
  // The ids the model was trained on are the checkpoint's table's: text read today must map to
  // the same symbols.
  if (!checkpoint.symbols.empty()) {
    const std::string difference =
        text::table_difference(checkpoint.symbols, "the checkpoint's symbol table",
                               text::symbol_table(trained.config.text.symbol_set),
                               fmt::format("text.symbol_set {}", trained.config.text.symbol_set));
    TTS_CHECK(difference.empty(),
              "{}: the model was trained on other symbol ids than text.symbol_set {} gives today "
              "({}); this build cannot read text for it: use the tts-train version that trained "
              "it, or warm start a model of today's table from it (train --init-from, which "
              "copies the embedding by symbol)",
              trained.source, trained.config.text.symbol_set, difference);
  }
  text::TextProcessor text(trained.config.text);
  trained.model =
      tacotron2::build_model(trained.config, text.num_symbols(), trained.phase.r, device);
  // Synthesis never replays graphs: packed recurrences on CUDA, whatever the run trained with.
  trained.model->set_recurrence(tacotron2::recurrence_paths(device, /*cuda_graphs=*/false));
  checkpoint::restore_model(checkpoint, *trained.model, trained.source);
  trained.model->eval();
  trained.speakers = checkpoint.speakers;
  return trained;
}

int64_t speaker_row(const config::Config& config, const std::vector<std::string>& table,
                    const std::string& name, const std::string& source) {
  if (config.model.speakers == 0) {
    TTS_USAGE_CHECK(name.empty(),
                    "{} is a one-speaker model (model.speakers: 0): it takes no --speaker (given "
                    "'{}')",
                    source, name);
    return -1;
  }
  TTS_CHECK(!table.empty() && static_cast<int64_t>(table.size()) <= config.model.speakers,
            "{}: a model of {} speaker rows (model.speakers) with a speaker table of {} names",
            source, config.model.speakers, table.size());
  return models::speaker_row_by_name(table, name, source);
}

}  // namespace tts::tacotron2
