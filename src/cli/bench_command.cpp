// tts-train bench: times Tacotron-2 training steps on a synthetic batch, through the one Step
// that training runs (forward, losses, backward through the gradient reducer, clip, Adam), and
// prints one JSON line on stdout.
#include <torch/torch.h>

#include <algorithm>
#include <iostream>
#include <numeric>
#include <vector>

#include "tts/cli/command.h"
#include "tts/core/error.h"
#include "tts/core/frames.h"
#include "tts/core/logging.h"
#include "tts/core/timer.h"
#include "tts/dist/communicator.h"
#include "tts/model/flops.h"
#include "tts/model/layers.h"
#include "tts/model/loss.h"
#include "tts/model/precision.h"
#include "tts/model/tacotron2.h"
#include "tts/models/tacotron2/family.h"
#include "tts/train/step.h"

namespace tts::cli {
namespace {

struct BenchArgs {
  ConfigArgs config;
  int64_t batch = 0;
  int64_t text_len = 120;
  int64_t frames = 600;
  int steps = 5;
  int threads = 0;
  int64_t symbols = 148;
  std::string device = "cpu";
  std::string step_products;  // empty: the config's train.step_products
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

int run_bench(const BenchArgs& args) {
  config::Config config = args.config.load();
  int64_t batch = args.batch > 0 ? args.batch : config.train.batch_size;
  TTS_USAGE_CHECK(args.text_len >= 1 && args.frames >= 1 && args.steps >= 1 && args.symbols >= 2,
                  "bench: --text-len, --frames, --steps must be >= 1 and --symbols >= 2");
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
  model::apply_tf32(config.train.tf32);
  model::check_precision(config.train.precision, device);

  const int64_t r = config.model.n_frames_per_step;
  const int64_t frames = padded_frames(args.frames, r);
  const int64_t n_mels = config.audio.n_mels;
  const int64_t n_linear = config.audio.n_linear();
  std::unique_ptr<train::Family> family = tacotron2::make_family_without_data(
      train::FamilyContext{config, placement, *comm, "", "",
                           data::Phase{static_cast<int>(r), static_cast<int>(batch)}},
      args.symbols);
  family->set_phase(data::Phase{static_cast<int>(r), static_cast<int>(batch)});
  std::vector<std::unique_ptr<train::FamilyBatch>> micro_batches;
  micro_batches.push_back(std::make_unique<tacotron2::TacotronBatch>(
      tacotron2::synthetic_batch(config, batch, args.text_len, frames, args.symbols, device)));
  train::Step step(*family, *comm, config.distributed, config.train.max_bad_steps);
  checkpoint::TrainingState state;

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
  double median_step = median(step_s);
  // How close the step is to the machine's limit: the step's arithmetic, counted from the
  // shapes, at the measured step time, against a GEMM of the step's precision on this device.
  const model::StepFlops flops = model::count_step_flops(
      config.model, model::StepShape{batch, args.text_len, frames, n_mels,
                                     config.model.predict_linear ? n_linear : 0});
  const double achieved_gflops = flops.training() / median_step / 1e9;
  const double peak_gflops = model::measure_gemm_gflops(
      device,
      config.train.precision == config::Precision::kBf16 ? torch::kBFloat16 : torch::kFloat32);
  log::get("bench")->info(
      "{:.2f} GFLOP a step (3 x forward), {:.2f} GFLOP/s achieved; a {} GEMM on this device: "
      "{:.2f} GFLOP/s ({:.1f}% of it)",
      flops.training() / 1e9, achieved_gflops, config.train.precision, peak_gflops,
      100 * achieved_gflops / peak_gflops);
  std::cout << fmt::format(
                   "{{\"median_step_s\": {:.6f}, \"mel_frames_per_s\": {:.1f}, \"params\": {}, "
                   "\"forward_s\": {:.6f}, \"backward_s\": {:.6f}, \"optimizer_s\": {:.6f}, "
                   "\"mean_step_s\": {:.6f}, \"min_step_s\": {:.6f}, \"loss\": {:.6f}, "
                   "\"batch\": {}, \"text_len\": {}, \"frames\": {}, \"frames_per_step\": {}, "
                   "\"steps\": {}, \"threads\": {}, \"device\": \"{}\", \"tf32\": {}, "
                   "\"precision\": \"{}\", \"step_products\": \"{}\", \"step_gflop\": {:.4f}, "
                   "\"achieved_gflops\": {:.3f}, \"peak_gemm_gflops\": {:.3f}, "
                   "\"fraction_of_peak\": {:.4f}}}",
                   median_step, static_cast<double>(batch * frames) / median_step,
                   model::count_parameters(family->module()), median(forward_s), median(backward_s),
                   median(optimizer_s),
                   std::accumulate(step_s.begin(), step_s.end(), 0.0) / step_s.size(),
                   *std::min_element(step_s.begin(), step_s.end()), loss, batch, args.text_len,
                   frames, r, args.steps, torch::get_num_threads(), args.device, config.train.tf32,
                   config.train.precision, config.train.step_products, flops.training() / 1e9,
                   achieved_gflops, peak_gflops, achieved_gflops / peak_gflops)
            << std::endl;
  return 0;
}

Runner setup_bench(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  args->config.add_to(app, true);
  app.add_option("--batch", args->batch, "utterances per step (default: train.batch_size)");
  app.add_option("--text-len", args->text_len, "symbols per utterance")->capture_default_str();
  app.add_option("--frames", args->frames,
                 "mel frames per utterance (rounded up to a multiple "
                 "of r)")
      ->capture_default_str();
  app.add_option("--steps", args->steps, "timed steps, after one warm-up step")
      ->capture_default_str();
  app.add_option("--threads", args->threads, "intra-op threads (default: libtorch's choice)");
  app.add_option("--symbols", args->symbols,
                 "symbol table size (148 = NVIDIA/tacotron2's, for comparable parameter counts)")
      ->capture_default_str();
  app.add_option("--device", args->device, "cpu, or cuda when built with CUDA")
      ->capture_default_str();
  app.add_option("--step-products", args->step_products,
                 "how the decoder's per-step products run on the CPU: kernel (the small-batch "
                 "kernel), gemm (libtorch's BLAS) or fastest (each shape timed once); "
                 "default: the config's train.step_products");
  app.footer(
      "Prints one JSON line: median_step_s, mel_frames_per_s (batch x frames / median step), "
      "params, the median phase times forward_s (forward + loss), backward_s, optimizer_s "
      "(clip + Adam), step_gflop (the step's matrix products and convolutions counted from the "
      "shapes, 3 x forward), achieved_gflops, peak_gemm_gflops (a 1024^3 GEMM of the step's "
      "precision on the device) and fraction_of_peak. Progress goes to stderr.");
  return [args]() { return run_bench(*args); };
}

}  // namespace

TTS_REGISTER_COMMAND("bench", "time teacher-forced training steps on a synthetic batch", 80,
                     setup_bench);

}  // namespace tts::cli
