// tts-train bench: times training steps of the family model.kind names on a synthetic batch,
// through the one Step that training runs (forward, losses, backward through the gradient reducer,
// clip, the optimizer; a GAN's two updates), and prints one JSON line on stdout.
#include <torch/torch.h>

#include <algorithm>
#include <functional>
#include <iostream>
#include <map>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "tts/cli/command.h"
#include "tts/core/error.h"
#include "tts/core/logging.h"
#include "tts/core/timer.h"
#include "tts/dist/communicator.h"
#include "tts/models/registry.h"
#include "tts/train/op_counter.h"
#include "tts/train/precision.h"
#include "tts/train/step.h"

namespace tts::cli {
namespace {

struct BenchArgs {
  ConfigArgs config;
  int64_t batch = 0;
  int64_t text_len = 120;
  int64_t frames = 0;  // the family's default
  int steps = 5;
  int threads = 0;
  int64_t symbols = 148;
  std::string device = "cpu";
  std::string step_products;  // empty: the config's train.step_products
  bool profile = false;
  bool json = false;  // --json: what bench prints anyway (one JSON line alone on stdout)
};

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
  template <typename T>
  JsonLine& add(const std::string& key, const T& value) {
    fields_.push_back(fmt::format("\"{}\": {}", key, value));
    return *this;
  }
  JsonLine& add_text(const std::string& key, const std::string& value) {
    return add(key, fmt::format("\"{}\"", value));
  }
  std::string str() const { return fmt::format("{{{}}}", fmt::join(fields_, ", ")); }

 private:
  std::vector<std::string> fields_;
};

// One training iteration of `step` on `batches`, counted (train/op_counter.h) and timed.
struct ProfiledStep {
  train::OpCounts counts;
  double seconds = 0;
};

ProfiledStep profile_step(train::Step& step,
                          std::vector<std::unique_ptr<train::FamilyBatch>>& batches,
                          checkpoint::TrainingState& state, const torch::Device& device) {
  train::IntervalTotals totals;
  train::OpCounter counter;
  Stopwatch watch;
  step.run(batches, state, totals, false);
  synchronize(device);
  const double seconds = watch.seconds();
  return {counter.counts(), seconds};
}

// One warmed-up, counted iteration of the subject `make` builds.
ProfiledStep profile_subject(models::BenchSubject subject, const config::Config& config,
                             dist::Communicator& comm, const torch::Device& device) {
  std::vector<std::unique_ptr<train::FamilyBatch>> batches;
  batches.push_back(std::move(subject.batch));
  train::Step step(*subject.family, comm, config.distributed, config.train.max_bad_steps);
  checkpoint::TrainingState state;
  state.phase = subject.phase;
  train::IntervalTotals warm_up;
  step.run(batches, state, warm_up, false);
  return profile_step(step, batches, state, device);
}

// --profile's fields: what one iteration issues (operators, autograd nodes, host synchronizations,
// allocations, the share of its time outside operators) and, for a family with decoder steps (one
// that reads text), the operators per decoder step: the difference between iterations of
// `subject.frames` and twice as many frames, over the decoder steps between them.
void add_profile(JsonLine& json, const models::BenchSubject& subject, const ProfiledStep& base,
                 const std::function<ProfiledStep(int64_t frames)>& at_frames) {
  const train::OpCounts& c = base.counts;
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
int64_t trained_parameters(train::Family& family) {
  int64_t n = 0;
  for (const train::OptimizerSlot& slot : family.optimizers()) {
    for (const torch::Tensor& p : slot.parameters) n += p.numel();
  }
  return n;
}

int run_bench(const BenchArgs& args) {
  config::Config config = args.config.load();
  const int64_t batch = args.batch > 0 ? args.batch : config.train.batch_size;
  TTS_USAGE_CHECK(args.text_len >= 1 && args.frames >= 0 && args.steps >= 1 && args.symbols >= 2,
                  "bench: --text-len, --steps must be >= 1, --frames >= 0 and --symbols >= 2");
  const auto wanted = config::require_choice<config::Device>(args.device, "bench: --device");
  TTS_USAGE_CHECK(wanted != config::Device::kCuda || torch::cuda::is_available(),
                  "bench: --device cuda, but no CUDA device is available to this libtorch "
                  "(build against a CUDA libtorch through Torch_DIR, or use --device cpu)");
  if (!args.step_products.empty()) {
    config.train.step_products =
        config::require_choice<config::StepProducts>(args.step_products, "bench: --step-products");
  }
  if (args.threads > 0) torch::set_num_threads(args.threads);
  // One rank, as a training run alone: the same family, step and reducer that `train` runs.
  const dist::Placement placement =
      dist::resolve_placement(dist::RankInfo{}, wanted, config::Backend::kGloo);
  std::unique_ptr<dist::Communicator> comm =
      dist::make_communicator(dist::RankInfo{}, config.distributed, placement);
  const torch::Device device = placement.device;
  torch::manual_seed(config.train.seed);
  train::apply_tf32(config.train.tf32);
  train::check_precision(config.train.precision, device);

  models::BenchSubject subject =
      models::family(config.model.kind)
          .bench(train::FamilyContext{config, placement, *comm, "", "", data::Phase{}},
                 models::BenchShape{batch, args.text_len, args.frames, args.symbols});
  std::vector<std::unique_ptr<train::FamilyBatch>> micro_batches;
  micro_batches.push_back(std::move(subject.batch));
  train::Step step(*subject.family, *comm, config.distributed, config.train.max_bad_steps);
  checkpoint::TrainingState state;
  state.phase = subject.phase;

  std::vector<double> step_s, forward_s, backward_s, optimizer_s;
  double loss = 0;
  for (int i = 0; i <= args.steps; ++i) {  // step 0 warms up
    train::IntervalTotals totals;
    Stopwatch watch;
    step.run(micro_batches, state, totals, false);
    synchronize(device);
    const double t_step = watch.seconds();
    const train::StepTimes& times = totals.times;
    loss = totals.losses.mean("loss");
    if (i == 0) continue;
    step_s.push_back(t_step);
    forward_s.push_back(times.forward);
    backward_s.push_back(times.backward);
    optimizer_s.push_back(times.communication + times.optimizer);
    log::get("bench")->info(
        "step {}/{}: {:.3f} s (forward {:.3f}, backward {:.3f}, optimizer {:.3f})", i, args.steps,
        t_step, times.forward, times.backward, times.communication + times.optimizer);
  }
  const double median_step = median(step_s);
  JsonLine json;
  json.add("median_step_s", fmt::format("{:.6f}", median_step))
      .add("mel_frames_per_s",
           fmt::format("{:.1f}", static_cast<double>(batch * subject.frames) / median_step));
  if (subject.samples > 0) {
    json.add("samples_per_s",
             fmt::format("{:.1f}", static_cast<double>(batch * subject.samples) / median_step));
  }
  json.add_text("model", fmt::format("{}", config.model.kind))
      .add("params", trained_parameters(*subject.family))
      .add("forward_s", fmt::format("{:.6f}", median(forward_s)))
      .add("backward_s", fmt::format("{:.6f}", median(backward_s)))
      .add("optimizer_s", fmt::format("{:.6f}", median(optimizer_s)))
      .add("mean_step_s", fmt::format("{:.6f}", std::accumulate(step_s.begin(), step_s.end(), 0.0) /
                                                    static_cast<double>(step_s.size())))
      .add("min_step_s", fmt::format("{:.6f}", *std::min_element(step_s.begin(), step_s.end())))
      .add("loss", fmt::format("{:.6f}", loss))
      .add("batch", batch);
  if (subject.text_len > 0) json.add("text_len", subject.text_len);
  json.add("frames", subject.frames);
  if (subject.samples > 0) json.add("samples", subject.samples);
  json.add("steps", args.steps)
      .add("threads", torch::get_num_threads())
      .add_text("device", args.device)
      .add("tf32", config.train.tf32)
      .add_text("precision", fmt::format("{}", config.train.precision));
  if (args.profile) {
    const ProfiledStep base = profile_step(step, micro_batches, state, device);
    add_profile(json, subject, base, [&](int64_t frames) {
      return profile_subject(
          models::family(config.model.kind)
              .bench(train::FamilyContext{config, placement, *comm, "", "", data::Phase{}},
                     models::BenchShape{batch, args.text_len, frames, args.symbols}),
          config, *comm, device);
    });
  }
  for (const models::BenchSubject::Field& field : subject.fields) {
    if (field.text) {
      json.add_text(field.name, field.value);
    } else {
      json.add(field.name, field.value);
    }
  }
  if (subject.step_gflop > 0) {
    // How close the step is to the machine's limit: the step's arithmetic, counted from the
    // shapes, at the measured step time, against a GEMM of the step's precision on this device.
    const double achieved_gflops = subject.step_gflop / median_step;
    const double peak_gflops = train::measure_gemm_gflops(
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
  std::cout << json.str() << std::endl;
  return 0;
}

Runner setup_bench(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  args->config.add_to(app, true);
  app.add_option("--batch", args->batch, "utterances per step (default: train.batch_size)");
  app.add_option("--text-len", args->text_len, "symbols per utterance (a family that reads text)")
      ->capture_default_str();
  app.add_option("--frames", args->frames,
                 "mel frames per utterance (a family that reads text: rounded up to a multiple "
                 "of r; default 600) or per vocoder window (default: the family's training "
                 "window)");
  app.add_option("--steps", args->steps, "timed steps, after one warm-up step")
      ->capture_default_str();
  app.add_option("--threads", args->threads, "intra-op threads (default: libtorch's choice)");
  app.add_option("--symbols", args->symbols,
                 "symbol table size (148 = NVIDIA's, for comparable parameter counts)")
      ->capture_default_str();
  app.add_option("--device", args->device, "cpu, or cuda when built with CUDA")
      ->capture_default_str();
  app.add_option("--step-products", args->step_products,
                 "how the decoder's per-step products run on the CPU: kernel (the small-batch "
                 "kernel), gemm (libtorch's BLAS) or fastest (each shape timed once); "
                 "default: the config's train.step_products");
  app.add_flag("--profile", args->profile,
               "also count what one iteration issues: operators (ops_forward), autograd nodes "
               "(nodes_backward), host synchronizations (sync, sync_ops), allocations, the share "
               "of its time outside operators, and for a family with decoder steps the "
               "operators per decoder step (*_per_decoder_step: the difference between "
               "--frames and twice as many)");
  app.add_flag("--json", args->json,
               "stdout holds only the JSON line (as it does without --json: progress and logs "
               "go to stderr), e.g. bench --profile --json | jq .sync");
  app.footer(
      "Times the family model.kind names. Prints one JSON line: "
      "median_step_s, mel_frames_per_s (batch x frames / median step), for a vocoder "
      "samples_per_s (batch x window samples / median step), model, params, the median phase "
      "times forward_s (forward + loss), backward_s, optimizer_s (clip + optimizer), loss and "
      "the shapes; for a family that counts its arithmetic also step_gflop (the step's matrix "
      "products and convolutions "
      "counted from the shapes, 3 x forward), achieved_gflops, peak_gemm_gflops (a 1024^3 GEMM "
      "of the step's precision on the device) and fraction_of_peak. Progress goes to stderr, so "
      "stdout holds the JSON line alone, with --json or without.");
  return [args]() { return run_bench(*args); };
}

}  // namespace

TTS_REGISTER_COMMAND("bench", "time training steps of the config's model on a synthetic batch", 80,
                     setup_bench);

}  // namespace tts::cli
