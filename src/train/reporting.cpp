#include "tts/train/reporting.h"

#include <algorithm>

#include "tts/core/host_read.h"
#include "tts/core/logging.h"
#include "tts/core/timer.h"
#include "tts/dist/communicator.h"
#include "tts/report/metric_names.h"

namespace tts::train {

std::vector<double> StepTimes::as_vector() {
  std::vector<double> values;
  auto put = [&](double& field) { values.push_back(field); };
  visit(put);
  return values;
}

StepTimes StepTimes::from_vector(const std::vector<double>& values, size_t offset) {
  StepTimes times;
  auto take = [&](double& field) { field = values.at(offset++); };
  times.visit(take);
  return times;
}

void LossSums::add(const std::string& name, const torch::Tensor& value) {
  if (!value.defined()) return;
  for (auto& [known, sum] : sums) {
    if (known == name) {
      sum.add_(value.detach());
      return;
    }
  }
  sums.emplace_back(name, torch::zeros_like(value, torch::MemoryFormat::Contiguous));
  sums.back().second.add_(value.detach());
}

void LossSums::reset() {
  for (auto& [name, sum] : sums) sum.zero_();
  count = 0;
}

void IntervalTotals::reset() {
  times = StepTimes{};
  losses.reset();
  std::fill(grad_norm_sums.begin(), grad_norm_sums.end(), 0.0);
  std::fill(updates.begin(), updates.end(), 0);
  for (torch::Tensor& sum : device_grad_norm_sums) sum.zero_();
  for (torch::Tensor& count : device_updates) count.zero_();
}

double LossSums::mean(const std::string& name) const {
  for (const auto& [known, sum] : sums) {
    if (known == name && count > 0)
      return host_read(sum.to(torch::kFloat64)).item<double>() / static_cast<double>(count);
  }
  return NAN;
}

void report_interval(IntervalTotals& totals, const checkpoint::TrainingState& state,
                     const std::vector<std::string>& optimizer_names, const RunProgress& progress,
                     dist::Communicator& comm, MetricSink* metrics) {
  namespace metric = report::metric;
  // Every rank contributes its phase times; rank 0 reports the mean and the slowest rank.
  const std::vector<double> gathered = comm.all_gather(totals.times.as_vector());
  if (metrics == nullptr || totals.times.steps <= 0) return;
  const int ranks = comm.size();
  const size_t fields = gathered.size() / static_cast<size_t>(ranks);
  StepTimes mean, most;
  for (int r = 0; r < ranks; ++r) {
    StepTimes rank = StepTimes::from_vector(gathered, static_cast<size_t>(r) * fields);
    std::vector<double> sum = mean.as_vector(), top = most.as_vector(), own = rank.as_vector();
    for (size_t i = 0; i < fields; ++i) {
      sum[i] += own[i] / ranks;
      top[i] = std::max(top[i], own[i]);
    }
    mean = StepTimes::from_vector(sum, 0);
    most = StepTimes::from_vector(top, 0);
  }
  const LossSums& losses = totals.losses;
  const double steps = mean.steps;
  const double step_total = std::max(mean.step, 1e-12);
  const double step_s = mean.step / steps;
  const double mel_frames_per_s = mean.frames * ranks / std::max(mean.step, 1e-9);
  MetricRecord record{metric::kTrain, {}};
  record.add(metric::kStep, static_cast<double>(state.step));
  record.add(metric::kEpoch, static_cast<double>(state.epoch));
  for (const auto& [name, sum] : losses.sums) record.add(name, losses.mean(name));
  // An optimizer's name after the first: "lr_generator", "grad_norm_generator".
  auto named = [&](const char* base, size_t slot) {
    return slot == 0 ? std::string(base) : fmt::format("{}_{}", base, optimizer_names.at(slot));
  };
  for (size_t slot = 0; slot < totals.grad_norm_sums.size(); ++slot) {
    const int64_t updates = totals.updates.at(slot);
    record.add(named(metric::kGradNorm, slot),
               updates > 0 ? totals.grad_norm_sums[slot] / static_cast<double>(updates) : NAN);
  }
  record.add(metric::kElapsed, progress.run_seconds);  // since this process started (or resumed)
  for (size_t slot = 0; slot < state.learning_rates.size(); ++slot) {
    record.add(named(metric::kLearningRate, slot), state.learning_rates[slot]);
  }
  record.add(metric::kStepSeconds, step_s);
  record.add(metric::kMelFramesPerSecond, mel_frames_per_s);
  record.add(metric::kUtterancesPerSecond, mean.utterances * ranks / std::max(mean.step, 1e-9));
  record.add(metric::kDataWait, mean.data / steps);
  record.add(metric::kForward, mean.forward / steps);
  record.add(metric::kBackward, mean.backward / steps);
  record.add(metric::kCommExposed, mean.communication / steps);
  record.add(metric::kOptimizer, mean.optimizer / steps);
  record.add(metric::kRankSpread, most.step / step_total);
  record.add(metric::kPaddedFramesPerRank, mean.padded_frames / steps);
  record.add(metric::kPaddedFramesImbalance,
             most.padded_frames / std::max(mean.padded_frames, 1e-12));
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
      losses.mean(metric::kLoss), mel_frames_per_s, step_s, 100 * mean.data / step_total,
      100 * mean.communication / step_total, most.step / step_total, eta);
}

}  // namespace tts::train
