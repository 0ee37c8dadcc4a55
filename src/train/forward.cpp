#include "tts/train/forward.h"

#include "tts/model/precision.h"

namespace tts::train {

model::LossParts forward_loss(model::Tacotron2Impl& model, const data::Batch& batch,
                              const config::TrainOptions& train, model::TacotronOutput* output) {
  *output = model::forward_in_precision(model, batch.text, batch.text_lengths, batch.mel,
                                        batch.mel_lengths, train.precision);
  model::Targets targets{batch.mel, batch.mel_lengths, batch.stop, batch.linear};
  return model::compute_loss(*output, targets, batch.text_lengths, model::loss_options(train));
}

}  // namespace tts::train
