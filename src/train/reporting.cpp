#include "tts/train/reporting.h"

#include <algorithm>

#include "tts/core/logging.h"
#include "tts/core/timer.h"
#include "tts/dist/communicator.h"
#include "tts/train/lr_schedule.h"

namespace tts::train {

void report_interval(const IntervalTotals& totals, const TrainingState& state,
                     const RunProgress& progress, const config::TrainOptions& train,
                     dist::Communicator& comm, MetricSink* metrics) {
  const PhaseTimes& phases = totals.phases;
  // Every rank contributes its phase times; rank 0 reports the mean and the slowest rank.
  std::vector<double> gathered = comm.all_gather(phases.as_vector());
  if (metrics == nullptr || phases.steps <= 0) return;
  int ranks = comm.size();
  auto value = [&](int rank, size_t index) { return gathered[rank * PhaseTimes::kCount + index]; };
  auto mean = [&](size_t index) {
    double sum = 0;
    for (int r = 0; r < ranks; ++r) sum += value(r, index);
    return sum / ranks;
  };
  auto maximum = [&](size_t index) {
    double best = 0;
    for (int r = 0; r < ranks; ++r) best = std::max(best, value(r, index));
    return best;
  };
  const LossSums& losses = totals.losses;
  double steps = phases.steps;
  double step_s = mean(5) / steps;
  double mel_frames_per_s = mean(7) * ranks / std::max(mean(5), 1e-9);
  double lr = learning_rate_at(train, state.step);
  MetricRecord record{"train", {}};
  record.add("step", static_cast<double>(state.step));
  record.add("epoch", static_cast<double>(state.epoch));
  for (const char* name :
       {"loss", "mel_loss", "postnet_loss", "gate_loss", "linear_loss", "guided_attention_loss"}) {
    double v = losses.mean(name);
    if (!std::isnan(v) || std::string(name) == "loss") record.add(name, v);
  }
  record.add("grad_norm", totals.grad_norm_sum / steps);
  record.add("elapsed_s", progress.run_seconds);  // since this process started (or resumed)
  record.add("lr", lr);
  record.add("step_s", step_s);
  record.add("mel_frames_per_s", mel_frames_per_s);
  record.add("utterances_per_s", mean(8) * ranks / std::max(mean(5), 1e-9));
  record.add("data_wait_s", mean(0) / steps);
  record.add("forward_s", mean(1) / steps);
  record.add("backward_s", mean(2) / steps);
  record.add("comm_exposed_s", mean(3) / steps);
  record.add("optimizer_s", mean(4) / steps);
  record.add("rank_spread", maximum(5) / std::max(mean(5), 1e-12));
  record.add("padded_frames_per_rank", mean(6) / steps);
  record.add("padded_frames_imbalance", maximum(6) / std::max(mean(6), 1e-12));
  metrics->write(record, state.step);

  std::string eta;
  if (progress.max_steps > 0 && progress.steps_this_run > 0) {
    double per_step = progress.run_seconds / static_cast<double>(progress.steps_this_run);
    eta = fmt::format(
        " | ETA {}",
        format_duration(per_step * static_cast<double>(progress.max_steps - state.step)));
  }
  log::get("train")->info(
      "step {}{} | epoch {} | loss {:.4f} | {:.0f} mel frames/s | {:.3f} s/step (data {:.0f}%, "
      "comm {:.0f}%, spread {:.2f}){}",
      state.step, progress.max_steps > 0 ? fmt::format("/{}", progress.max_steps) : "", state.epoch,
      losses.mean("loss"), mel_frames_per_s, step_s, 100 * mean(0) / std::max(mean(5), 1e-12),
      100 * mean(3) / std::max(mean(5), 1e-12), maximum(5) / std::max(mean(5), 1e-12), eta);
}

}  // namespace tts::train
