// The teacher-forced forward pass of a batch and its loss: what a training step back-propagates
// and what validation averages, computed one way for both.
#pragma once

#include "tts/config/train_options.h"
#include "tts/data/batch.h"
#include "tts/model/loss.h"
#include "tts/model/tacotron2.h"

namespace tts::train {

// Runs `model` on `batch` in train.precision (model/precision.h), puts its outputs in `*output`
// and returns the loss parts against the batch's targets (model/loss.h).
model::LossParts forward_loss(model::Tacotron2Impl& model, const data::Batch& batch,
                              const config::TrainOptions& train, model::TacotronOutput* output);

}  // namespace tts::train
