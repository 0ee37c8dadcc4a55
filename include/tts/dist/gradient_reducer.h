// Bucketed gradient all-reduce overlapped with backward (the pattern of PyTorch's DDP reducer).
//
// Parameters are packed into buckets in reverse registration order (gradients of the last layers
// are ready first): a small first bucket (distributed.first_bucket_mb) so communication starts
// early, then buckets of distributed.bucket_mb. A hook on each parameter copies its gradient into
// the bucket's flat buffer and counts the bucket down; when every parameter of a bucket has
// reported, and every earlier bucket has been launched, the bucket is all-reduced
// asynchronously. Buckets therefore launch in the same order on every rank, whatever order
// autograd runs the hooks in. After backward, finish_step() launches the buckets whose
// parameters got no gradient this step (their slots are zero-filled, so no rank waits for a
// hook that never fires), waits for all, and writes grad = sum / world_size back.
//
// Gradient accumulation: begin_step(false) for the non-final micro-batches lets gradients
// accumulate locally in param.grad (no communication); begin_step(true) on the last one reduces
// the accumulated gradients.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "tts/config/distributed_options.h"
#include "tts/dist/communicator.h"

namespace tts::dist {

class GradientReducer {
 public:
  // `parameters` in registration order (module.parameters()); those with requires_grad false are
  // skipped. All must live on comm.device() and have one dtype per bucket (buckets split where
  // the dtype changes). The reducer registers hooks on the parameters; it must outlive every
  // backward pass run while it exists.
  GradientReducer(std::vector<torch::Tensor> parameters, Communicator& comm,
                  const config::DistributedOptions& options);
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  // Call before each backward. `reduce_this_micro_batch` is false for the non-final micro-batches
  // of gradient accumulation and true for the last one (and for every step without accumulation).
  void begin_step(bool reduce_this_micro_batch);
  // Call after backward of a reducing micro-batch (a no-op otherwise): launches the remaining
  // buckets, waits for all of them and leaves param.grad = mean over ranks. Parameters that got
  // no gradient on any rank keep grad undefined; those that got one on some ranks get the mean
  // with zeros from the others. `stop_requested` is this rank's wish to stop after this step (a
  // signal); it rides on the step's own all-reduce, so that stop_agreed() is the same on every
  // rank without a collective of its own.
  //
  // Reads nothing on the host but once (Note [Used parameters] in gradient_reducer.cpp): which
  // parameters some rank used is learned from the first reducing step; afterwards the parameters
  // learned as used always get the reduced gradient, and used_mask() says on the device which of
  // them no rank used in this step (the optimizer leaves those alone, as it does a parameter
  // without a gradient). The stop wishes are summed on the device until settle().
  void finish_step(bool stop_requested = false);
  // Writes this rank's stop wish where the next finish_step() sends it, in place (no host read,
  // no allocation): what a step run as a replayed CUDA graph, whose finish_step() does not run
  // on the host, sends. finish_step(stop) with the same wish then writes nothing.
  void set_stop_wish(bool stop_requested);
  // Per parameter of `parameters` (an optimizer's, in its order), float64 on the device: 1 where
  // some rank gave it a gradient in the last reducing step (or the reducer does not hold it), 0
  // where none did. Undefined before the first reducing step.
  torch::Tensor used_mask(const std::vector<torch::Tensor>& parameters);
  // A read point (one host read): stop_agreed() becomes whether any rank asked to stop in a
  // reducing step since the last settle(); a parameter that no rank used in the learning step but
  // got a gradient since is logged, and the used parameters are learned again.
  void settle();
  // Whether any rank asked to stop: after a non-final micro-batch or on one rank, this rank's
  // wish in the last finish_step(); after reducing steps, what the last settle() read.
  bool stop_agreed() const;

  // Seconds finish_step() of the last reducing step spent waiting for communication (the part of
  // the all-reduce not hidden behind backward, as the host waited for it).
  double last_exposed_comm_seconds() const;
  // Number of buckets and their sizes in elements, in launch order (for logs and tests).
  std::vector<int64_t> bucket_sizes() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace tts::dist
