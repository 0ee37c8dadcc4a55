#include "tts/train/launch.h"

#include <torch/torch.h>

#include <algorithm>
#include <filesystem>

#include "tts/checkpoint/checkpoint.h"
#include "tts/core/error.h"
#include "tts/core/fs.h"
#include "tts/core/logging.h"
#include "tts/dist/communicator.h"
#include "tts/dist/launcher.h"
#include "tts/dist/placement.h"
#include "tts/dist/rank_info.h"

namespace tts::train {
namespace {

int visible_gpus() {
  return torch::cuda::is_available() ? static_cast<int>(torch::cuda::device_count()) : 0;
}

// Whether the run folder has a checkpoint to continue from; a bare --resume without one is
// refused, pointing to --resume auto. Checked by the launcher before any worker starts, and by
// each rank.
bool resumable(const LaunchRequest& request) {
  if (request.resume == ResumeMode::kNone) return false;
  const std::string checkpoints = request.train.run_dir + "/checkpoints";
  const bool found = std::filesystem::is_directory(checkpoints) &&
                     !checkpoint::checkpoint_files(checkpoints).empty();
  TTS_USAGE_CHECK(found || request.resume == ResumeMode::kAuto,
                  "--resume: no checkpoint in {} to continue from; start the run without "
                  "--resume, or pass --resume auto (continue when there is a checkpoint, else "
                  "start fresh)",
                  checkpoints);
  return found;
}

RunFolderUse folder_use(const LaunchRequest& request) {
  if (request.resume != ResumeMode::kNone) return RunFolderUse::kResume;
  return request.overwrite ? RunFolderUse::kOverwrite : RunFolderUse::kNew;
}

// The launcher: re-runs this command line as `nproc` workers with the torchrun environment.
int launch_workers(const LaunchRequest& request, int nproc) {
  TTS_USAGE_CHECK(request.max_restarts == 0 || request.resume == ResumeMode::kAuto,
                  "--max-restarts {} needs --resume auto, or every restart would start the run "
                  "over",
                  request.max_restarts);
  // The launcher judges the run folder once, before any worker starts; the workers (and their
  // restarts) find it fresh and never move anything.
  resumable(request);
  const std::string aside = prepare_run_folder(request.train.run_dir, folder_use(request));
  if (!aside.empty()) log::get("train")->info("--overwrite: the previous run is in {}", aside);
  std::vector<std::string> worker_argv =
      dist::worker_command_line({"--nproc-per-node", "--max-restarts"});
  worker_argv.erase(std::remove_if(worker_argv.begin(), worker_argv.end(),
                                   [](const std::string& arg) {
                                     return arg == "--overwrite" ||
                                            arg.rfind("--overwrite=", 0) == 0;
                                   }),
                    worker_argv.end());
  return dist::launch_workers(nproc, worker_argv, request.config.distributed, request.max_restarts,
                              request.train.run_dir + "/logs");
}

// One rank's run folder: judged (every rank may: only rank 0 writes checkpoints and metrics, and
// not before all ranks have met, so they all see what was there before the run), created, and
// its logs opened; returns whether there is a checkpoint to resume from.
bool open_run_folder(const LaunchRequest& request, const dist::RankInfo& rank) {
  const bool found = resumable(request);  // refused before anything is made
  const std::string& run_dir = request.train.run_dir;
  TTS_USAGE_CHECK(folder_use(request) != RunFolderUse::kOverwrite || !rank.distributed(),
                  "--overwrite with ranks started by torchrun or srun: no one rank may move the "
                  "folder the others already write to; move {} aside yourself (mv), or pass "
                  "another --out",
                  run_dir);
  const std::string aside = prepare_run_folder(run_dir, folder_use(request));
  log::setup({request.log_level, rank.rank, rank.world_size});
  std::filesystem::create_directories(run_dir);  // named by the user: may be a link
  if (rank.rank == 0) log::add_file(run_dir + "/train.log");
  if (!aside.empty()) log::get("train")->info("--overwrite: the previous run is in {}", aside);
  // Every rank's own failures stay in the run directory, also those of ranks on other hosts.
  create_folder(run_dir + "/logs");
  log::add_file(fmt::format("{}/logs/rank_{}.log", run_dir, rank.rank), spdlog::level::warn);
  if (request.resume == ResumeMode::kAuto && !found && rank.rank == 0) {
    log::get("train")->info("--resume auto: no checkpoint in {}/checkpoints yet: starting fresh",
                            run_dir);
  }
  return found;
}

}  // namespace

int launch(LaunchRequest request) {
  const dist::RankInfo rank = dist::RankInfo::from_env();
  const int nproc =
      request.nproc_per_node > 0 ? request.nproc_per_node : std::max(1, visible_gpus());
  if (!rank.distributed() && nproc > 1) return launch_workers(request, nproc);
  request.train.resume = open_run_folder(request, rank);
  install_stop_handlers();
  try {
    const dist::Placement placement =
        dist::resolve_placement(request.config, rank, request.backend);
    std::unique_ptr<dist::Communicator> comm =
        dist::make_communicator(rank, request.config.distributed, placement, request.process_group);
    if (rank.distributed() && comm->device().is_cpu()) {
      torch::set_num_threads(request.config.distributed.threads_per_rank);
    }
    return train(request.config, request.train, *comm, placement, request.make_family);
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    if (!rank.distributed()) throw;
    throw Error(fmt::format("{} (every rank's warnings and errors: {}/logs/rank_<K>.log)", e.what(),
                            request.train.run_dir));
  }
}

}  // namespace tts::train
