// tts-train dist-selftest: a hidden subcommand that exercises the dist module with real
// processes (the launcher, rendezvous, collectives, fault handling). The dist tests run it; it is
// not listed in --help.
#include <csignal>
#include <iostream>
#include <thread>

#include "tts/cli/command.h"
#include "tts/core/error.h"
#include "tts/core/logging.h"
#include "tts/dist/communicator.h"
#include "tts/dist/launcher.h"
#include "tts/dist/rank_info.h"

namespace tts::cli {
namespace {

struct SelftestArgs {
  int nproc_per_node = 0;
  int rounds = 2;
  int fail_rank = -1;
  std::string fail_mode = "exit";
  double timeout_s = 60.0;
  std::string backend = "gloo";
  std::string device;  // default: cuda for nccl, else cpu
  bool until_signal = false;
};

volatile std::sig_atomic_t g_stop_requested = 0;
void request_stop(int) { g_stop_requested = 1; }

// Each round all-reduces (rank + 1) and checks the sum; the failing rank, if any, leaves before
// the second round: exiting with code 3, killing itself with SIGKILL, or hanging. With
// --until-signal the rounds go on until SIGINT/SIGTERM reaches any rank; the ranks agree on the
// stop through the all-reduce (as the training loop does) and exit 0 together.
int run_worker(const SelftestArgs& args) {
  const dist::RankInfo info = dist::RankInfo::from_env();
  apply_log_level(nullptr, info.rank, info.world_size);
  if (args.until_signal) {
    std::signal(SIGINT, request_stop);
    std::signal(SIGTERM, request_stop);
  }
  config::DistributedOptions options;
  options.timeout_s = args.timeout_s;
  const auto backend = config::require_choice<config::Backend>(args.backend, "--backend");
  const config::Device device =
      !args.device.empty() ? config::require_choice<config::Device>(args.device, "--device")
      : backend == config::Backend::kNccl ? config::Device::kCuda
                                          : config::Device::kCpu;
  auto comm = dist::make_communicator(info, options, backend, device,
                                      /*process_group_for_one_rank=*/true);
  const auto on_device = torch::TensorOptions().dtype(torch::kFloat64).device(comm->device());
  const double expected = comm->size() * (comm->size() + 1) / 2.0;
  for (int round = 0; args.until_signal || round < args.rounds; ++round) {
    if (round == 1 && info.rank == args.fail_rank) {
      std::cout << "rank " << info.rank << " failing (" << args.fail_mode << ")" << std::endl;
      if (args.fail_mode == "kill") std::raise(SIGKILL);
      if (args.fail_mode == "hang") std::this_thread::sleep_for(std::chrono::hours(1));
      return 3;
    }
    std::vector<torch::Tensor> t{
        torch::full({4}, static_cast<double>(info.rank + 1), on_device),
        torch::full({1}, static_cast<double>(g_stop_requested), on_device)};
    comm->all_reduce_sum(t);
    const double got = t[0][0].item<double>();
    const std::vector<double> gathered = comm->all_gather({static_cast<double>(info.rank)});
    for (int r = 0; r < comm->size(); ++r) {
      TTS_CHECK(gathered[r] == r, "selftest: rank {}: all-gather gave {} for rank {}", info.rank,
                gathered[r], r);
    }
    TTS_CHECK(got == expected, "selftest: rank {} round {}: all-reduce gave {}, expected {}",
              info.rank, round, got, expected);
    std::cout << "round " << round << " sum " << got << " ok" << std::endl;
    if (t[1].item<double>() > 0) {
      std::cout << "stopping after a signal" << std::endl;
      break;
    }
    if (args.until_signal) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  comm->barrier();
  return 0;
}

Runner setup_dist_selftest(CLI::App& app) {
  app.group("");  // hidden from --help
  auto args = std::make_shared<SelftestArgs>();
  app.add_option("--nproc-per-node", args->nproc_per_node,
                 "launch this many workers through the built-in launcher");
  app.add_option("--rounds", args->rounds, "all-reduce rounds");
  app.add_option("--fail-rank", args->fail_rank, "this rank fails before round 2");
  app.add_option("--fail-mode", args->fail_mode, "exit (code 3), kill (SIGKILL) or hang")
      ->check(CLI::IsMember({"exit", "kill", "hang"}));
  app.add_option("--timeout", args->timeout_s, "distributed.timeout_s");
  app.add_option("--backend", args->backend, "gloo or nccl");
  app.add_option("--device", args->device, "cpu or cuda (default: cuda for nccl, else cpu)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_flag("--until-signal", args->until_signal, "run rounds until SIGINT/SIGTERM");
  return [args]() {
    if (args->nproc_per_node > 0) {
      config::DistributedOptions options;
      options.timeout_s = args->timeout_s;
      return dist::launch_workers(args->nproc_per_node,
                                  dist::worker_command_line({"--nproc-per-node"}), options);
    }
    return run_worker(*args);
  };
}

}  // namespace

TTS_REGISTER_COMMAND("dist-selftest", "exercise the dist module with real processes (tests)", 999,
                     setup_dist_selftest);

}  // namespace tts::cli
