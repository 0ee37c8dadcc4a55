// tts-train train: one worker per device. Run alone (one process), under torchrun/srun (the
// environment says which rank this is), or with --nproc-per-node N, the built-in launcher that
// spawns and supervises N workers on this machine. The command parses; train::launch does it.
#include "tts/cli/command.h"
#include "tts/models/registry.h"
#include "tts/train/launch.h"

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
    train::LaunchRequest request;
    request.config = args->config.load();
    request.train = args->train;
    request.resume = args->resume_option->count() == 0 ? train::ResumeMode::kNone
                     : args->resume == "auto"          ? train::ResumeMode::kAuto
                                                       : train::ResumeMode::kLatest;
    request.overwrite = args->overwrite;
    request.nproc_per_node = args->nproc_per_node;
    request.max_restarts = args->max_restarts;
    if (!args->backend.empty()) {
      request.backend = config::require_choice<config::Backend>(args->backend, "--backend");
    }
    request.process_group = args->process_group;
    request.log_level = resolved_log_level(&request.config);
    request.make_family = models::family_factory(request.config.model.kind);
    return train::launch(std::move(request));
  };
}

}  // namespace

TTS_REGISTER_COMMAND("train",
                     "train a model (model.kind) on a feature store, on one or many devices", 20,
                     setup_train);

}  // namespace tts::cli
