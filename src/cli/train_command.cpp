// tts-train train: one worker per device. Run alone (one process), under torchrun/srun (the
// environment says which rank this is), or with --nproc-per-node N, the built-in launcher that
// spawns and supervises N workers on this machine.
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "tts/checkpoint/checkpoint.h"
#include "tts/cli/command.h"
#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/core/logging.h"
#include "tts/dist/communicator.h"
#include "tts/dist/launcher.h"
#include "tts/dist/rank_info.h"
#include "tts/models/registry.h"
#include "tts/train/run_folder.h"
#include "tts/train/trainer.h"

namespace tts::cli {
namespace {

struct TrainCommandArgs {
  ConfigArgs config;
  train::TrainArgs train;
  int nproc_per_node = 0;
  int max_restarts = 0;
  CLI::Option* resume_option = nullptr;
  std::string resume;  // "" (bare --resume: latest) or "auto"
  std::string backend;
  bool process_group = false;
  bool overwrite = false;
};

int visible_gpus() {
  return torch::cuda::is_available() ? static_cast<int>(torch::cuda::device_count()) : 0;
}

Runner setup_train(CLI::App& app) {
  auto args = std::make_shared<TrainCommandArgs>();
  args->config.add_to(app, true);
  app.add_option("--data", args->train.data_dir, "feature store written by tts-train preprocess")
      ->required();
  app.add_option("--out", args->train.run_dir,
                 "run directory: config.yaml, metrics.jsonl, checkpoints/, plots/, samples/. It "
                 "holds one run: a folder with checkpoints (checkpoints/step_*.pt) or metrics (a "
                 "non-empty metrics.jsonl) is refused without --resume or --overwrite; an empty "
                 "one, or one left by a run that never logged a step nor saved (config.yaml and "
                 "logs only), is reused")
      ->required();
  app.add_option("--max-steps", args->train.max_steps, "stop after this many steps");
  args->resume_option =
      app.add_option("--resume", args->resume,
                     "continue from OUT/checkpoints/latest; `--resume auto`: only if OUT has a "
                     "checkpoint, else start fresh (for restarts by torchrun or --max-restarts)")
          ->expected(0, 1)
          ->check(CLI::IsMember({"auto"}));
  app.add_flag("--overwrite", args->overwrite,
               "start a new run in an OUT that holds one: the old run's files move into "
               "OUT/previous-N first (nothing is deleted; the log says where). Decided once, by "
               "the process that starts the ranks: refused under torchrun or srun (move the old "
               "run yourself there)")
      ->excludes(args->resume_option);
  app.add_option("--max-restarts", args->max_restarts,
                 "with --nproc-per-node: restart all workers up to N times after a failure "
                 "(needs --resume auto)");
  app.add_option("--init-from", args->train.init_from,
                 "warm start: the weights of this checkpoint (ours, or NVIDIA/tacotron2's), with "
                 "a fresh optimizer and step count")
      ->excludes(args->resume_option);
  app.add_option("--init-skip", args->train.init_skip,
                 "with --init-from: tensor name prefixes to leave initialized (e.g. embedding)");
  app.add_option("--nproc-per-node", args->nproc_per_node,
                 "spawn this many worker processes on this machine (default: one per visible "
                 "GPU, 1 on CPU)");
  app.add_option("--backend", args->backend,
                 "gloo, nccl or auto (default: distributed.backend; auto is nccl on CUDA, gloo "
                 "on CPU)")
      ->check(CLI::IsMember(config::choice_names<config::Backend>()));
  app.add_flag("--process-group", args->process_group,
               "use a real Gloo/NCCL process group even for one rank (checks the NCCL path on one "
               "GPU; with more ranks there always is one)");
  return [args]() {
    config::Config config = args->config.load();
    dist::RankInfo rank = dist::RankInfo::from_env();
    int nproc = args->nproc_per_node > 0 ? args->nproc_per_node : std::max(1, visible_gpus());
    const bool resume_auto = args->resume_option->count() > 0 && args->resume == "auto";
    const train::RunFolderUse folder_use = args->resume_option->count() > 0
                                               ? train::RunFolderUse::kResume
                                           : args->overwrite ? train::RunFolderUse::kOverwrite
                                                             : train::RunFolderUse::kNew;
    if (!rank.distributed() && nproc > 1) {
      // The launcher: re-run this command line as N workers with the torchrun environment.
      TTS_USAGE_CHECK(args->max_restarts == 0 || resume_auto,
                      "--max-restarts {} needs --resume auto, or every restart would start the "
                      "run over",
                      args->max_restarts);
      // The launcher judges the run folder once, before any worker starts; the workers (and
      // their restarts) find it fresh and never move anything.
      const std::string aside = train::prepare_run_folder(args->train.run_dir, folder_use);
      if (!aside.empty()) log::get("train")->info("--overwrite: the previous run is in {}", aside);
      std::vector<std::string> worker_argv =
          dist::worker_command_line({"--nproc-per-node", "--max-restarts"});
      worker_argv.erase(std::remove_if(worker_argv.begin(), worker_argv.end(),
                                       [](const std::string& arg) {
                                         return arg == "--overwrite" ||
                                                arg.rfind("--overwrite=", 0) == 0;
                                       }),
                        worker_argv.end());
      return dist::launch_workers(nproc, worker_argv, config.distributed, args->max_restarts,
                                  args->train.run_dir + "/logs");
    }
    // Every rank may judge the folder: only rank 0 writes checkpoints and metrics, and not before
    // all ranks have met, so they all see what was there before the run.
    TTS_USAGE_CHECK(folder_use != train::RunFolderUse::kOverwrite || !rank.distributed(),
                    "--overwrite with ranks started by torchrun or srun: no one rank may move the "
                    "folder the others already write to; move {} aside yourself (mv), or pass "
                    "another --out",
                    args->train.run_dir);
    const std::string aside = train::prepare_run_folder(args->train.run_dir, folder_use);
    apply_log_level(&config, rank.rank, rank.world_size);
    std::filesystem::create_directories(args->train.run_dir);  // named by the user: may be a link
    if (rank.rank == 0) log::add_file(args->train.run_dir + "/train.log");
    if (!aside.empty()) log::get("train")->info("--overwrite: the previous run is in {}", aside);
    // Every rank's own failures stay in the run directory, also those of ranks on other hosts.
    create_folder(args->train.run_dir + "/logs");
    log::add_file(fmt::format("{}/logs/rank_{}.log", args->train.run_dir, rank.rank),
                  spdlog::level::warn);
    const std::string checkpoints = args->train.run_dir + "/checkpoints";
    args->train.resume = resume_auto ? std::filesystem::is_directory(checkpoints) &&
                                           !checkpoint::checkpoint_files(checkpoints).empty()
                                     : args->resume_option->count() > 0;
    if (resume_auto && !args->train.resume && rank.rank == 0) {
      log::get("train")->info("--resume auto: no checkpoint in {}/checkpoints yet: starting fresh",
                              args->train.run_dir);
    }
    train::install_stop_handlers();
    try {
      const dist::Placement placement = dist::resolve_placement(
          config, rank,
          args->backend.empty()
              ? std::nullopt
              : std::optional(config::require_choice<config::Backend>(args->backend, "--backend")));
      std::unique_ptr<dist::Communicator> comm =
          dist::make_communicator(rank, config.distributed, placement, args->process_group);
      if (rank.distributed() && comm->device().is_cpu()) {
        torch::set_num_threads(config.distributed.threads_per_rank);
      }
      return train::train(config, args->train, *comm, placement,
                          models::family_factory(config.model.kind));
    } catch (const UsageError&) {
      throw;
    } catch (const Error& e) {
      if (!rank.distributed()) throw;
      throw Error(fmt::format("{} (every rank's warnings and errors: {}/logs/rank_<K>.log)",
                              e.what(), args->train.run_dir));
    }
  };
}

}  // namespace

TTS_REGISTER_COMMAND("train",
                     "train a model (model.kind) on a feature store, on one or many devices", 20,
                     setup_train);

}  // namespace tts::cli
