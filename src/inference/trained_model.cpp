#include "tts/inference/trained_model.h"

#include "tts/checkpoint/checkpoint.h"
#include "tts/model/precision.h"
#include "tts/text/text_processor.h"

namespace tts::inference {

TrainedModel load_trained_model(const std::string& path, const torch::Device& device) {
  TrainedModel trained;
  checkpoint::Checkpoint checkpoint = checkpoint::load_newest_checkpoint(path, &trained.source);
  trained.config = checkpoint::checkpoint_config(checkpoint, trained.source);
  trained.phase = checkpoint::checkpoint_phase(checkpoint, trained.config);
  trained.step = checkpoint.state.step;
  model::apply_tf32(trained.config.train.tf32);
  text::TextProcessor text(trained.config.text);
  trained.model = model::build_model(trained.config, text.num_symbols(), trained.phase.r);
  checkpoint::restore_model(checkpoint, *trained.model, trained.source);
  trained.model->to(device);
  trained.model->eval();
  return trained;
}

}  // namespace tts::inference
