// train.cuda_graphs: one training iteration per batch shape captured as a CUDA graph and replayed.
//
// Note [Replaying a training step]
// A CUDA graph replays the kernels its capture recorded, on the memory they used then; none of
// the step's host code runs again. Replaying the captured iteration is the same as running the
// step eagerly only when the step (the family's train_step and Step::take: forward, backward, the
// gradient reducer's all-reduce, the clip, the update):
//  1. never synchronizes with the host: no .item(), no host branch on a device value (the
//     gradient clip, the finite check and Adam's step count stay on the device). A
//     synchronization during capture is a CUDA error, which GraphedStep turns into one that says
//     so and how to train without graphs.
//  2. reads every per-step input from device memory that is rewritten before each replay: the
//     batch (its shape's static buffers, data/static_batch.h), the batch's counts (Batch::counts,
//     not the host values that weight the losses), the learning rate of each optimizer and the
//     number of the step being taken (Step's device buffers: Step::begin computes the schedule's
//     rates on the host and fills them in place, outside the capture, before the capture and
//     before every replay; the update reads its rate there, and a family reads the step number
//     as Updates::device_step, not Updates::step), the dropout streams (keyed by the device step
//     and the utterances on the device, not by host seeds), the stop wish the all-reduce carries
//     (GradientReducer::set_stop_wish, from Step::begin; the agreed stop read back from the
//     device at the read point);
//  3. keeps the tensors that outlive an iteration where they are: gradients zeroed in place, not
//     freed (zero_grad without set_to_none), optimizer state allocated in the eager warm-up, and
//     the accumulators of 4, made in the warm-up and zeroed in place at each log interval
//     (IntervalTotals::reset), never made anew;
//  4. leaves its losses and gradient norms in device accumulators that the log reads at its
//     interval: LossSums adds each loss in place into its sum and IntervalTotals' device grad-norm
//     sums and update counts are added in place, so a replay adds into the memory the log reads.
//     The host side of a step (the batch's counts into the step times, LossSums::next that counts
//     the step for the means, state.step) is Step::finish, which both an eager step and a replay
//     run The record of whether each update was kept, which settle() reads (its warnings,
//     train.max_bad_steps), is the graph's output: Step::captured takes it from the capture and
//     Step::replayed copies it on the device after each replay.
// 2 to 4 would fail silently (a replay repeating the captured step's learning rate, weights or
// masks), so a family states that its step meets them: Family::replay_blocker() is empty. Until
// it is, train.cuda_graphs is refused with the family's reason.
//
// Per batch shape (a length bucket and a batch size): the shape's first kWarmupSteps batches run
// eagerly on a side stream (cuBLAS workspaces, autograd's and the reducer's buffers, Adam's state
// are allocated there, outside any capture); the next one is captured on that stream into a
// memory pool that every shape's graph shares (graphs replay one at a time), then replayed; every
// later batch of the shape is copied into the shape's static buffers and the graph replayed. The
// all-reduce is captured with the step (NCCL can be captured; Gloo never runs on CUDA here), but
// not NCCL's blocking wait, which waits on the host: several NCCL ranks replay only with
// TORCH_NCCL_BLOCKING_WAIT=0 in the environment (docs/gpu.md).
#pragma once

#include <torch/types.h>

#include <memory>
#include <vector>

#include "tts/checkpoint/training_state.h"
#include "tts/config/train_options.h"
#include "tts/train/family.h"
#include "tts/train/reporting.h"

namespace tts::train {

class Step;

// Eager iterations of a shape before its capture.
inline constexpr int kGraphWarmupSteps = 3;
// Shapes a run may capture: a bucket ladder's (at most config::kMaxLengthBuckets) times the batch
// sizes the sampler cuts (a phase's batch_size and one less), and r_schedule's phases.
inline constexpr int kMaxGraphShapes = 256;

// Runs a Step through captured graphs.
class GraphedStep {
 public:
  virtual ~GraphedStep() = default;
  // Step::run's contract: one optimizer step over `micro_batches` (one: train.accumulate 1).
  virtual void run(std::vector<std::unique_ptr<FamilyBatch>>& micro_batches,
                   checkpoint::TrainingState& state, IntervalTotals& totals, bool stop_wish) = 0;
  // Shapes captured so far.
  virtual int captured_shapes() const = 0;
};

// Throws UsageError naming train.cuda_graphs and the fix unless the run can replay: train.
// cuda_graphs and train.length_buckets on, train.accumulate 1, a CUDA `device`, a build with
// CUDA, and a family whose step meets Note [Replaying a training step].
void check_graphed_step(Family& family, const config::TrainOptions& train,
                        const torch::Device& device);

// check_graphed_step, then the GraphedStep over `step` (which must outlive it).
std::unique_ptr<GraphedStep> make_graphed_step(Step& step, Family& family,
                                               const config::TrainOptions& train,
                                               const torch::Device& device);

}  // namespace tts::train
