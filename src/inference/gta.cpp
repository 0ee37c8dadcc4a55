#include "tts/inference/gta.h"

#include "tts/core/error.h"
#include "tts/core/logging.h"
#include "tts/dist/launcher.h"
#include "tts/dist/rank_info.h"
#include "tts/models/registry.h"

namespace tts::inference {

int gta(GtaLaunch launch) {
  const dist::RankInfo rank = dist::RankInfo::from_env();
  if (!rank.distributed() && launch.nproc_per_node > 1) {
    return dist::launch_workers(launch.nproc_per_node,
                                dist::worker_command_line({"--nproc-per-node"}),
                                config::DistributedOptions{});
  }
  log::setup({launch.log_level, rank.rank, rank.world_size});
  models::GtaRequest& request = launch.request;
  request.rank = rank.rank;
  request.world_size = rank.world_size;
  request.local_rank = rank.local_rank;
  request.local_world_size = rank.local_world_size;
  models::TrainedCheckpoint trained = models::read_trained(request.checkpoint);
  const models::FamilyEntry& family = models::family(trained.config.model.kind);
  TTS_USAGE_CHECK(family.acoustic.gta,
                  "{} is a model.kind {} checkpoint: gta computes the mels of an acoustic "
                  "model's checkpoint (teacher-forced over a feature store)",
                  trained.source, trained.config.model.kind);
  family.acoustic.gta(trained, request);
  return 0;
}

}  // namespace tts::inference
