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
#include "tts/config/train_options.h"
#include "tts/dist/placement.h"
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
  // This rank's device: the one its model lives on and collectives expect tensors on (CPU, or the
  // rank's GPU for nccl and for gloo on CUDA tensors). The one source of truth for placement.
  virtual torch::Device device() const = 0;

  // Element-wise sum over ranks, in place; blocking.
  virtual void all_reduce_sum(std::vector<torch::Tensor>& tensors) = 0;
  // Starts the same sum; the tensors must stay alive and untouched until wait() returns.
  virtual std::shared_ptr<Pending> all_reduce_sum_async(std::vector<torch::Tensor>& tensors) = 0;
  // Overwrites `tensors` on every rank with root's; blocking.
  virtual void broadcast(std::vector<torch::Tensor>& tensors, int root) = 0;
  virtual void barrier() = 0;
  // A barrier without a time limit for as long as every rank is alive: for the points where some
  // ranks do long work alone (rank 0 validating, plotting, writing a checkpoint to a slow disk)
  // while the others would otherwise wait in a collective bounded by distributed.timeout_s. A rank
  // that dies meanwhile (its heartbeat stops) ends the wait with an error naming it. `what` names
  // the point in errors.
  virtual void wait_for_all(const std::string& what) = 0;
  // Every rank's `values` (all of the same length), concatenated rank-major:
  // result[r * values.size() + i] is rank r's values[i].
  virtual std::vector<double> all_gather(const std::vector<double>& values) = 0;
};

// World size 1: a local communicator whose collectives are no-ops (unless
// `process_group_for_one_rank`, which checks the Gloo/NCCL path with one process; without a
// MASTER_PORT it then hosts its store on a free loopback port). Otherwise: rendezvous through a
// c10d TCPStore at info.master_addr:master_port (rank 0 hosts it), then a Gloo or NCCL process
// group; options.timeout_s bounds the rendezvous and every collective.
// The rank's device and backend come from `placement` (placement.h: resolve_placement). Throws
// tts::Error when the rendezvous fails.
std::unique_ptr<Communicator> make_communicator(const RankInfo& info,
                                                const config::DistributedOptions& options,
                                                const Placement& placement,
                                                bool process_group_for_one_rank = false);
// The same, placed by resolve_placement(info, device, backend): `backend` (auto resolves with
// resolve_backend) and `device` (train.device); see rank_device(). Throws UsageError for an
// unavailable backend or device.
std::unique_ptr<Communicator> make_communicator(const RankInfo& info,
                                                const config::DistributedOptions& options,
                                                config::Backend backend,
                                                config::Device device = config::Device::kCpu,
                                                bool process_group_for_one_rank = false);

// The device of rank `info` for `device` (cpu, cuda, or auto: CUDA where available) and a
// resolved `backend` (gloo or nccl): cuda:local_rank when the node has a GPU per local rank; with
// fewer GPUs, gloo shares them round robin (local_rank % GPUs) and nccl is refused (NCCL needs one
// GPU per rank). nccl always needs CUDA. Local ranks come from RankInfo (LOCAL_RANK,
// SLURM_LOCALID).
torch::Device rank_device(const RankInfo& info, config::Device device, config::Backend backend);

// CUDA builds: compares the NCCL version libtorch was built with and the nccl.h tts-train was
// compiled against (ProcessGroupNCCL::Options embeds NCCL's config struct: their layouts must
// agree) and throws tts::Error naming both when they differ. CPU builds: does nothing. The NCCL
// group runs it before it starts.
void check_nccl_headers();

// auto resolves to nccl when `device` (train.device) is not cpu and CUDA is available to this
// build and machine, else gloo; gloo and nccl are returned as they are.
config::Backend resolve_backend(config::Backend configured, config::Device device);

}  // namespace tts::dist
