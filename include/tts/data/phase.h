// A phase of training: the reduction factor r (mel frames per decoder step) and the per-rank
// batch size in force. Without train.r_schedule a run has one phase (model.n_frames_per_step,
// train.batch_size); with one, each row of the schedule is a phase (train/r_schedule.h). The phase
// is passed explicitly to whatever depends on it (the loader pads and counts for its r and cuts
// batches of its size, the model predicts r frames a step, the validator scores decoder steps of
// r frames); the config stays what the user wrote.
#pragma once

namespace tts::data {

struct Phase {
  int r = 1;
  int batch_size = 1;
  bool operator==(const Phase& other) const {
    return r == other.r && batch_size == other.batch_size;
  }
  bool operator!=(const Phase& other) const { return !(*this == other); }
};

}  // namespace tts::data
