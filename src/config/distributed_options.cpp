#include "tts/config/distributed_options.h"

namespace tts::config {

void DistributedOptions::validate() const {
  require(timeout_s > 0, "distributed.timeout_s", timeout_s, "must be > 0 s");
  require(bucket_mb > 0, "distributed.bucket_mb", bucket_mb, "must be > 0 MB");
  require_at_most("distributed.bucket_mb", bucket_mb, kMaxBucketMb, "PyTorch's DDP uses 25 MB");
  require(first_bucket_mb > 0 && first_bucket_mb <= bucket_mb, "distributed.first_bucket_mb",
          first_bucket_mb, fmt::format("must be in (0, distributed.bucket_mb ({})]", bucket_mb));
  require(threads_per_rank >= 1, "distributed.threads_per_rank", threads_per_rank,
          "must be at least 1");
  require_at_most("distributed.threads_per_rank", threads_per_rank, kMaxThreadsPerRank,
                  "one machine's cores");
  require(check_replicas_every >= 0, "distributed.check_replicas_every", check_replicas_every,
          "must be >= 0 (0 = off)");
  require(master_port >= 0 && master_port <= 65535, "distributed.master_port", master_port,
          "must be a port in [0, 65535] (0 = pick a free port)");
}

}  // namespace tts::config
