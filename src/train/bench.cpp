#include "tts/train/bench.h"

#include <torch/torch.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "tts/core/error.h"
#include "tts/core/logging.h"
#include "tts/core/timer.h"
#include "tts/dist/communicator.h"
#include "tts/dist/placement.h"
#include "tts/dist/rank_info.h"
#include "tts/train/op_counter.h"
#include "tts/train/precision.h"
#include "tts/train/step.h"
#include "tts/train/trainer.h"

namespace tts::train {
namespace {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

void synchronize(const torch::Device& device) {
#ifdef TTS_WITH_CUDA
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
#else
  (void)device;
#endif
}

// A flat JSON object, its fields in the order added.
class JsonLine {
 public:
  explicit JsonLine(BenchResult& result) : result_(result) {}
  template <typename T>
  JsonLine& add(const std::string& key, const T& value) {
    result_.fields.emplace_back(key, fmt::format("{}", value));
    return *this;
  }
  JsonLine& add_text(const std::string& key, const std::string& value) {
    return add(key, fmt::format("\"{}\"", value));
  }

 private:
  BenchResult& result_;
};

// One training iteration of `step` on `batches`, counted (train/op_counter.h) and timed.
struct ProfiledStep {
  OpCounts counts;
  double seconds = 0;
};

ProfiledStep profile_step(Step& step, std::vector<std::unique_ptr<FamilyBatch>>& batches,
                          checkpoint::TrainingState& state, const torch::Device& device) {
  IntervalTotals totals;
  OpCounter counter;
  Stopwatch watch;
  step.run(batches, state, totals, false);
  synchronize(device);
  const double seconds = watch.seconds();
  return {counter.counts(), seconds};
}

// One warmed-up, counted iteration of the subject `make` builds.
ProfiledStep profile_subject(BenchSubject subject, const config::Config& config,
                             dist::Communicator& comm, const torch::Device& device) {
  std::vector<std::unique_ptr<FamilyBatch>> batches;
  batches.push_back(std::move(subject.batch));
  Step step(*subject.family, comm, config.distributed, config.train.max_bad_steps);
  checkpoint::TrainingState state;
  state.phase = subject.phase;
  IntervalTotals warm_up;
  step.run(batches, state, warm_up, false);
  return profile_step(step, batches, state, device);
}

// --profile's fields: what one iteration issues (operators, autograd nodes, host synchronizations,
// allocations, the share of its time outside operators) and, for a family with decoder steps (one
// that reads text), the operators per decoder step: the difference between iterations of
// `subject.frames` and twice as many frames, over the decoder steps between them.
void add_profile(JsonLine& json, const BenchSubject& subject, const ProfiledStep& base,
                 const std::function<ProfiledStep(int64_t frames)>& at_frames) {
  const OpCounts& c = base.counts;
  json.add("ops_forward", c.forward_ops)
      .add("nodes_backward", c.backward_nodes)
      .add("sync", c.sync_total())
      .add("allocations", c.allocations)
      .add("outside_ops_share",
           fmt::format("{:.3f}", std::max(0.0, 1.0 - c.op_seconds / base.seconds)));
  std::vector<std::string> syncs;
  for (const auto& [name, count] : c.syncs) syncs.push_back(fmt::format("{} {}", name, count));
  json.add_text("sync_ops", fmt::format("{}", fmt::join(syncs, ", ")));
  // Where the iteration's time goes: the top-level operators and autograd nodes with the largest
  // shares of it, largest first (the rest is in neither).
  std::vector<std::pair<double, std::string>> by_time;
  for (const auto& [name, seconds] : c.seconds_by_name) by_time.emplace_back(seconds, name);
  std::sort(by_time.begin(), by_time.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::vector<std::string> shares;
  for (size_t i = 0; i < std::min<size_t>(by_time.size(), 10); ++i) {
    shares.push_back(
        fmt::format("{} {:.1f}%", by_time[i].second, 100 * by_time[i].first / base.seconds));
  }
  json.add_text("time_share_by_name", fmt::format("{}", fmt::join(shares, ", ")));
  if (subject.text_len <= 0) return;
  const int64_t r = std::max(1, subject.phase.r);
  const ProfiledStep longer = at_frames(2 * subject.frames);
  const double steps = static_cast<double>(subject.frames / r);
  const double forward = static_cast<double>(longer.counts.forward_ops - c.forward_ops) / steps;
  const double backward =
      static_cast<double>(longer.counts.backward_nodes - c.backward_nodes) / steps;
  json.add("ops_forward_per_decoder_step", fmt::format("{:.1f}", forward))
      .add("nodes_backward_per_decoder_step", fmt::format("{:.1f}", backward))
      .add("ops_per_decoder_step", fmt::format("{:.1f}", forward + backward))
      .add("sync_per_decoder_step",
           fmt::format("{:.2f}",
                       static_cast<double>(longer.counts.sync_total() - c.sync_total()) / steps))
      .add("allocations_per_decoder_step",
           fmt::format("{:.1f}",
                       static_cast<double>(longer.counts.allocations - c.allocations) / steps));
  // What the per-step operators are, by name, most frequent first.
  auto per_step_names = [&](const std::map<std::string, int64_t>& shorter,
                            const std::map<std::string, int64_t>& longer_names) {
    std::vector<std::pair<double, std::string>> rows;
    for (const auto& [name, count] : longer_names) {
      auto it = shorter.find(name);
      const double per_step =
          static_cast<double>(count - (it == shorter.end() ? 0 : it->second)) / steps;
      if (per_step > 0.05) rows.emplace_back(per_step, name);
    }
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    std::vector<std::string> parts;
    for (const auto& [per_step, name] : rows)
      parts.push_back(fmt::format("{} {:.1f}", name, per_step));
    return fmt::format("{}", fmt::join(parts, ", "));
  };
  json.add_text("ops_forward_per_decoder_step_by_name",
                per_step_names(c.forward_by_name, longer.counts.forward_by_name))
      .add_text("nodes_backward_per_decoder_step_by_name",
                per_step_names(c.backward_by_name, longer.counts.backward_by_name));
}

// What the optimizers update (a WaveNet's moving average, which none updates, is not counted).
int64_t trained_parameters(Family& family) {
  int64_t n = 0;
  for (const OptimizerSlot& slot : family.optimizers()) {
    for (const torch::Tensor& p : slot.parameters) n += p.numel();
  }
  return n;
}

}  // namespace

std::string BenchResult::json() const {
  std::vector<std::string> parts;
  for (const auto& [key, value] : fields) parts.push_back(fmt::format("\"{}\": {}", key, value));
  return fmt::format("{{{}}}", fmt::join(parts, ", "));
}

namespace {

// The median phase times of the timed steps, and the last step's loss.
struct StepTimings {
  std::vector<double> step, forward, backward, optimizer;
  double loss = 0;
};

StepTimings time_steps(Step& step, std::vector<std::unique_ptr<FamilyBatch>>& micro_batches,
                       checkpoint::TrainingState& state, int steps, const torch::Device& device) {
  StepTimings t;
  for (int i = 0; i <= steps; ++i) {  // step 0 warms up
    IntervalTotals totals;
    Stopwatch watch;
    step.run(micro_batches, state, totals, false);
    synchronize(device);
    const double t_step = watch.seconds();
    const StepTimes& times = totals.times;
    t.loss = totals.losses.mean("loss");
    if (i == 0) continue;
    t.step.push_back(t_step);
    t.forward.push_back(times.forward);
    t.backward.push_back(times.backward);
    t.optimizer.push_back(times.communication + times.optimizer);
    log::get("bench")->info(
        "step {}/{}: {:.3f} s (forward {:.3f}, backward {:.3f}, optimizer {:.3f})", i, steps,
        t_step, times.forward, times.backward, times.communication + times.optimizer);
  }
  return t;
}

void add_timings(JsonLine& json, const BenchRequest& request, const BenchSubject& subject,
                 int64_t batch, const StepTimings& t) {
  const config::Config& config = request.config;
  const double median_step = median(t.step);
  json.add("median_step_s", fmt::format("{:.6f}", median_step))
      .add("mel_frames_per_s",
           fmt::format("{:.1f}", static_cast<double>(batch * subject.frames) / median_step));
  if (subject.samples > 0) {
    json.add("samples_per_s",
             fmt::format("{:.1f}", static_cast<double>(batch * subject.samples) / median_step));
  }
  json.add_text("model", fmt::format("{}", config.model.kind))
      .add("params", trained_parameters(*subject.family))
      .add("forward_s", fmt::format("{:.6f}", median(t.forward)))
      .add("backward_s", fmt::format("{:.6f}", median(t.backward)))
      .add("optimizer_s", fmt::format("{:.6f}", median(t.optimizer)))
      .add("mean_step_s", fmt::format("{:.6f}", std::accumulate(t.step.begin(), t.step.end(), 0.0) /
                                                    static_cast<double>(t.step.size())))
      .add("min_step_s", fmt::format("{:.6f}", *std::min_element(t.step.begin(), t.step.end())))
      .add("loss", fmt::format("{:.6f}", t.loss))
      .add("batch", batch);
  if (subject.text_len > 0) json.add("text_len", subject.text_len);
  json.add("frames", subject.frames);
  if (subject.samples > 0) json.add("samples", subject.samples);
  json.add("steps", request.steps)
      .add("threads", torch::get_num_threads())
      .add_text("device", fmt::format("{}", request.device))
      .add("tf32", config.train.tf32)
      .add_text("precision", fmt::format("{}", config.train.precision));
}

// How close the step is to the machine's limit: the step's arithmetic, counted from the shapes,
// at the measured step time, against a GEMM of the step's precision on this device.
void add_arithmetic(JsonLine& json, const config::Config& config, const BenchSubject& subject,
                    double median_step, const torch::Device& device) {
  const double achieved_gflops = subject.step_gflop / median_step;
  const double peak_gflops = measure_gemm_gflops(
      device,
      config.train.precision == config::Precision::kBf16 ? torch::kBFloat16 : torch::kFloat32);
  log::get("bench")->info(
      "{:.2f} GFLOP a step (3 x forward), {:.2f} GFLOP/s achieved; a {} GEMM on this device: "
      "{:.2f} GFLOP/s ({:.1f}% of it)",
      subject.step_gflop, achieved_gflops, config.train.precision, peak_gflops,
      100 * achieved_gflops / peak_gflops);
  json.add("step_gflop", fmt::format("{:.4f}", subject.step_gflop))
      .add("achieved_gflops", fmt::format("{:.3f}", achieved_gflops))
      .add("peak_gemm_gflops", fmt::format("{:.3f}", peak_gflops))
      .add("fraction_of_peak", fmt::format("{:.4f}", achieved_gflops / peak_gflops));
}

}  // namespace

BenchResult bench(const BenchRequest& request) {
  const config::Config& config = request.config;
  const BenchShape& asked = request.shape;
  BenchShape shape{asked.batch > 0 ? asked.batch : config.train.batch_size, asked.text_len,
                   asked.frames, asked.symbols};
  TTS_USAGE_CHECK(
      shape.text_len >= 1 && shape.frames >= 0 && request.steps >= 1 && shape.symbols >= 2,
      "bench: --text-len, --steps must be >= 1, --frames >= 0 and --symbols >= 2");
  TTS_USAGE_CHECK(request.device != config::Device::kCuda || torch::cuda::is_available(),
                  "bench: --device cuda, but no CUDA device is available to this libtorch "
                  "(build against a CUDA libtorch through Torch_DIR, or use --device cpu)");
  if (request.threads > 0) torch::set_num_threads(request.threads);
  // One rank, as a training run alone: the same family, step and reducer that `train` runs.
  const dist::Placement placement =
      dist::resolve_placement(dist::RankInfo{}, request.device, config::Backend::kGloo);
  std::unique_ptr<dist::Communicator> comm =
      dist::make_communicator(dist::RankInfo{}, config.distributed, placement);
  const torch::Device device = placement.device;
  start_process(config, device);
  auto subject_of = [&](const BenchShape& s) {
    return request.make_subject(FamilyContext{config, placement, *comm, "", "", data::Phase{}}, s);
  };
  BenchSubject subject = subject_of(shape);
  std::vector<std::unique_ptr<FamilyBatch>> micro_batches;
  micro_batches.push_back(std::move(subject.batch));
  Step step(*subject.family, *comm, config.distributed, config.train.max_bad_steps);
  checkpoint::TrainingState state;
  state.phase = subject.phase;
  const StepTimings timings = time_steps(step, micro_batches, state, request.steps, device);
  BenchResult result;
  JsonLine json(result);
  add_timings(json, request, subject, shape.batch, timings);
  if (request.profile) {
    const ProfiledStep base = profile_step(step, micro_batches, state, device);
    add_profile(json, subject, base, [&](int64_t frames) {
      BenchShape longer = shape;
      longer.frames = frames;
      return profile_subject(subject_of(longer), config, *comm, device);
    });
  }
  for (const BenchSubject::Field& field : subject.fields) {
    if (field.text) {
      json.add_text(field.name, field.value);
    } else {
      json.add(field.name, field.value);
    }
  }
  if (subject.step_gflop > 0) add_arithmetic(json, config, subject, median(timings.step), device);
  return result;
}

}  // namespace tts::train
