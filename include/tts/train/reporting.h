// What a run reports between validations: per-phase timers and loss sums collected over a log
// interval on every rank, reduced over the ranks into one log line and one "train" metrics record
// (metrics.jsonl and TensorBoard) on rank 0.
#pragma once

#include <torch/types.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tts/config/config.h"
#include "tts/model/loss.h"
#include "tts/train/checkpoint.h"
#include "tts/train/metrics.h"

namespace tts::dist {
class Communicator;
}

namespace tts::train {

// Seconds spent in each phase of a training step, summed over the steps of a log interval.
struct PhaseTimes {
  double data = 0;
  double forward = 0;
  double backward = 0;
  double communication = 0;  // exposed: waiting for all-reduces after backward
  double optimizer = 0;
  double step = 0;
  double padded_frames = 0;
  double mel_frames = 0;
  double utterances = 0;
  double steps = 0;

  static constexpr size_t kCount = 10;
  std::vector<double> as_vector() const {
    return {data, forward,       backward,   communication, optimizer,
            step, padded_frames, mel_frames, utterances,    steps};
  }
};

// Sums of loss parts over a log interval, kept where the losses are (on the GPU: no
// synchronization per step); mean() reads them on the host at the log interval.
struct LossSums {
  std::map<std::string, torch::Tensor> sums;
  int64_t count = 0;
  void add(const model::LossParts& parts) {
    auto put = [&](const char* name, const torch::Tensor& t) {
      if (!t.defined()) return;
      torch::Tensor& sum = sums[name];
      sum = sum.defined() ? sum + t.detach() : t.detach().clone();
    };
    put("loss", parts.total);
    put("mel_loss", parts.mel);
    put("postnet_loss", parts.mel_postnet);
    put("gate_loss", parts.gate);
    put("linear_loss", parts.linear);
    put("guided_attention_loss", parts.guided_attention);
    ++count;
  }
  double mean(const std::string& name) const {
    auto it = sums.find(name);
    return it == sums.end() || count == 0 ? NAN
                                          : it->second.item<double>() / static_cast<double>(count);
  }
};

// Everything one rank collects over a log interval.
struct IntervalTotals {
  PhaseTimes phases;
  LossSums losses;
  double grad_norm_sum = 0;  // over the steps that updated the parameters
};

// Where the run stands, for the ETA of the log line.
struct RunProgress {
  int64_t max_steps = 0;       // 0: no step limit, no ETA
  int64_t steps_this_run = 0;  // steps since this process started (or resumed)
  double run_seconds = 0;      // wall time since then
};

// Collective: every rank calls it with its own totals. Rank 0 (the one with `metrics`) writes the
// "train" record (losses, grad norm, LR, phase timers, throughput, rank spread) and the log line.
void report_interval(const IntervalTotals& totals, const TrainingState& state,
                     const RunProgress& progress, const config::TrainOptions& train,
                     dist::Communicator& comm, MetricSink* metrics);

}  // namespace tts::train
