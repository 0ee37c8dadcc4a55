// tts-train bench: times training steps of the family model.kind names on a synthetic batch
// (train::bench, train/bench.h) and prints one JSON line on stdout.
#include <iostream>
#include <memory>
#include <string>

#include "tts/cli/command.h"
#include "tts/models/registry.h"
#include "tts/train/bench.h"

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
  std::string recurrent_products;  // empty: the config's model.recurrent_products
  bool profile = false;
  bool json = false;  // --json: what bench prints anyway (one JSON line alone on stdout)
};

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
  app.add_option("--recurrent-products,--step-products", args->recurrent_products,
                 "how the decoder's per-step products run on the CPU: kernel (the small-batch "
                 "kernel), gemm (libtorch's BLAS) or fastest (each shape timed once); "
                 "default: the config's model.recurrent_products")
      ->check(CLI::IsMember(config::choice_names<config::RecurrentProducts>()));
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
  return [args]() {
    train::BenchRequest request;
    request.config = args->config.load();
    if (!args->recurrent_products.empty()) {
      config::apply_override(request.config,
                             "model.recurrent_products=" + args->recurrent_products);
    }
    request.shape = {args->batch, args->text_len, args->frames, args->symbols};
    request.steps = args->steps;
    request.threads = args->threads;
    request.device = config::require_choice<config::Device>(args->device, "bench: --device");
    request.profile = args->profile;
    request.make_subject = models::family(request.config.model.kind).bench;
    std::cout << train::bench(request).json() << std::endl;
    return 0;
  };
}

}  // namespace

TTS_REGISTER_COMMAND("bench", "time training steps of the config's model on a synthetic batch", 80,
                     setup_bench);

}  // namespace tts::cli
