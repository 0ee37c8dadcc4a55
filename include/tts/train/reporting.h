// What a run reports between validations: the step's timers and loss sums collected over a log
// interval on every rank, reduced over the ranks into one log line and one "train" metrics record
// (metrics.jsonl and TensorBoard) on rank 0.
#pragma once

#include <torch/types.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tts/checkpoint/training_state.h"
#include "tts/train/metrics.h"

namespace tts::dist {
class Communicator;
}

namespace tts::train {

// Seconds spent in each phase of a training step and what the steps processed, summed over the
// steps of a log interval. visit() lists every field once, with the metric it becomes; reporting
// reduces them over the ranks by name.
struct StepTimes {
  double data = 0;           // waiting for the loader
  double forward = 0;        // forward and losses
  double backward = 0;       // back-propagation (hooks launch the all-reduces)
  double communication = 0;  // exposed: waiting for all-reduces after backward
  double optimizer = 0;      // clip and update
  double step = 0;           // the whole step
  double padded_frames = 0;
  double frames = 0;  // real output frames
  double utterances = 0;
  double steps = 0;

  template <class V>
  void visit(V& v) {
    v(data);
    v(forward);
    v(backward);
    v(communication);
    v(optimizer);
    v(step);
    v(padded_frames);
    v(frames);
    v(utterances);
    v(steps);
  }
  std::vector<double> as_vector();
  static StepTimes from_vector(const std::vector<double>& values, size_t offset);
};

// Sums of named losses over a log interval, kept where the losses are (on the GPU: no
// synchronization per step); mean() reads them on the host at the log interval. Each sum is one
// tensor for the life of the object, added to in place and zeroed in place by reset(), so a
// replayed CUDA graph adds into the memory the next log reads (Note [Replaying a training
// step]).
struct LossSums {
  std::vector<std::pair<std::string, torch::Tensor>> sums;  // in the order first added
  int64_t count = 0;                                        // steps (or validation batches) added
  // Adds `value` (a scalar; undefined: the part is off) to `name`'s sum, made (zeros of the
  // value's dtype, on its device) on the first add of `name`.
  void add(const std::string& name, const torch::Tensor& value);
  // Ends one step's (or batch's) additions.
  void next() { ++count; }
  // The sum over the steps since the last reset() divided by their count (NaN before any step or
  // for a name never added).
  double mean(const std::string& name) const;
  // Starts a new interval: every sum zeroed in place (kept, with its name) and the count 0.
  void reset();
};

// Everything one rank collects over a log interval.
struct IntervalTotals {
  StepTimes times;
  LossSums losses;
  // Per optimizer (the family's order): gradient norms summed over the steps that updated it,
  // and those steps. Step::run adds them on the device (float64 and int64 scalars), Step::settle
  // moves them into the host fields at a read point.
  std::vector<double> grad_norm_sums;
  std::vector<int64_t> updates;
  std::vector<torch::Tensor> device_grad_norm_sums;
  std::vector<torch::Tensor> device_updates;

  // Starts a new log interval: the times, the host sums and counts 0, the loss sums and the
  // device accumulators zeroed in place (the same tensors, which a replayed step adds into).
  void reset();
};

// Where the run stands, for the ETA of the log line.
struct RunProgress {
  int64_t max_steps = 0;       // 0: no step limit, no ETA
  int64_t steps_this_run = 0;  // steps since this process started (or resumed)
  double run_seconds = 0;      // wall time since then
};

// Collective: every rank calls it with its own totals. Rank 0 (the one with `metrics`) writes the
// "train" record (losses, grad norms, the learning rates in `state`, phase timers, throughput,
// rank spread) and the log line. `optimizer_names` names the optimizers after the first in the
// record ("lr_<name>", "grad_norm_<name>").
void report_interval(IntervalTotals& totals, const checkpoint::TrainingState& state,
                     const std::vector<std::string>& optimizer_names, const RunProgress& progress,
                     dist::Communicator& comm, MetricSink* metrics);

}  // namespace tts::train
