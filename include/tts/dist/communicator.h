// The small communicator interface the gradient reducer, the training loop and the tests use,
// so they do not care whether Gloo (CPU), NCCL (CUDA) or nothing (one process) is underneath.
// All ranks must call the collectives in the same order with tensors of the same shapes and
// dtypes; results land in place. Failures (a lost peer, a timeout) throw tts::Error naming the
// rank(s) involved when they can be determined.
#pragma once

#include <torch/types.h>

#include <memory>
#include <string>
#include <vector>

#include "tts/config/distributed_options.h"
#include "tts/dist/rank_info.h"

namespace tts::dist {

// An asynchronous collective in flight; wait() blocks until its results are in place (for NCCL:
// until the current CUDA stream is ordered after it) and throws tts::Error on failure.
class Pending {
 public:
  virtual ~Pending() = default;
  virtual void wait() = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // The backend's name: "local", "gloo" or "nccl".
  virtual std::string backend() const = 0;
  // The device collectives expect tensors on (CPU for gloo/local, cuda:local_rank for nccl).
  virtual torch::Device device() const = 0;

  // Element-wise sum over ranks, in place; blocking.
  virtual void all_reduce_sum(std::vector<torch::Tensor>& tensors) = 0;
  // Starts the same sum; the tensors must stay alive and untouched until wait() returns.
  virtual std::shared_ptr<Pending> all_reduce_sum_async(std::vector<torch::Tensor>& tensors) = 0;
  // Overwrites `tensors` on every rank with root's; blocking.
  virtual void broadcast(std::vector<torch::Tensor>& tensors, int root) = 0;
  virtual void barrier() = 0;
  // Every rank's `values` (all of the same length), concatenated rank-major:
  // result[r * values.size() + i] is rank r's values[i].
  virtual std::vector<double> all_gather(const std::vector<double>& values) = 0;
};

// World size 1: a local communicator whose collectives are no-ops (unless
// `process_group_for_one_rank`, which checks the Gloo/NCCL path with one process). Otherwise:
// rendezvous through a c10d TCPStore at info.master_addr:master_port (rank 0 hosts it), then a
// Gloo or NCCL process group; options.timeout_s bounds the rendezvous and every collective.
// `backend` is "gloo", "nccl" or "auto" ("nccl" needs a CUDA build and makes cuda:local_rank the
// current device). Throws UsageError for an unknown or unavailable backend, tts::Error when the
// rendezvous fails.
std::unique_ptr<Communicator> make_communicator(const RankInfo& info,
                                                const config::DistributedOptions& options,
                                                const std::string& backend,
                                                bool process_group_for_one_rank = false);

// "auto" resolves to "nccl" when CUDA is available to this build and machine, else "gloo";
// "gloo" and "nccl" are returned as they are.
std::string resolve_backend(const std::string& configured);

}  // namespace tts::dist
