// train.cuda_graphs on CUDA: Note [Replaying a training step]
// (include/tts/train/cuda_graph_step.h).
#include "cuda_graph_step_cuda.h"

#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <map>
#include <string>

#include "tts/core/error.h"
#include "tts/core/logging.h"
#include "tts/core/timer.h"
#include "tts/train/static_batches.h"
#include "tts/train/step.h"

namespace tts::train {
namespace {

class CudaGraphedStep final : public GraphedStep {
 public:
  CudaGraphedStep(Step& step, const torch::Device& device)
      : step_(step),
        device_index_(device.index() < 0 ? c10::cuda::current_device() : device.index()),
        side_(c10::cuda::getStreamFromPool(false, device_index_)),
        pool_(at::cuda::graph_pool_handle()),
        buffers_(kMaxGraphShapes) {}

  void run(std::vector<std::unique_ptr<FamilyBatch>>& micro_batches,
           checkpoint::TrainingState& state, IntervalTotals& totals, bool stop_wish) override {
    TTS_CHECK(micro_batches.size() == 1,
              "train.cuda_graphs: a step of {} micro-batches; a captured step takes one "
              "(train.accumulate: 1)",
              micro_batches.size());
    const c10::cuda::CUDAStream current = c10::cuda::getCurrentCUDAStream(device_index_);
    // The copy runs on the current stream, after whatever last read the buffers (a replay on the
    // side stream that `current` waited for).
    StaticBatches::Slot& slot = buffers_.load(*micro_batches.front());
    std::vector<std::unique_ptr<FamilyBatch>> batches;
    batches.push_back(std::move(slot.buffers));
    struct Restore {  // the buffers go back to their slot, whatever happens
      StaticBatches::Slot& slot;
      std::vector<std::unique_ptr<FamilyBatch>>& batches;
      ~Restore() { slot.buffers = std::move(batches.front()); }
    } restore{slot, batches};

    at::cuda::CUDAEvent copied;
    copied.record(current);
    copied.block(side_);
    {
      const c10::cuda::CUDAStreamGuard on_side(side_);
      if (slot.loads <= kGraphWarmupSteps) {
        step_.run(batches, state, totals, stop_wish);
      } else {
        // Outside any capture: the learning rates and the step number of this step into the
        // device buffers the graph reads (Note [Replaying a training step], 2), on the side
        // stream, before the replay.
        Stopwatch clock;
        step_.begin(state, stop_wish);
        auto found = graphs_.find(slot.shape);
        Graph& graph =
            found != graphs_.end() ? found->second : capture(slot.shape, batches, state, totals);
        graph.graph->replay();  // after a capture too: it recorded the step without running it
        step_.replayed(graph.record, batches, state);
        Step::finish(batches, clock.seconds(), state, totals);
      }
    }
    at::cuda::CUDAEvent done;
    done.record(side_);
    done.block(current);
  }

  int captured_shapes() const override { return static_cast<int>(graphs_.size()); }

 private:
  // Records Step::take on the side stream (current), after Step::begin; the host side of take
  // (the record settle() reads) runs here, once, for the step the replay then takes.
  // A shape's graph and the record of what its step leaves for Step::settle.
  struct Graph {
    std::unique_ptr<at::cuda::CUDAGraph> graph;
    Step::Captured record;
  };

  Graph& capture(const std::string& shape, std::vector<std::unique_ptr<FamilyBatch>>& batches,
                 checkpoint::TrainingState& state, IntervalTotals& totals) {
    auto graph = std::make_unique<at::cuda::CUDAGraph>();
    side_.synchronize();  // the warm-up's work is done before the capture starts
    graph->capture_begin(pool_);
    try {
      step_.take(batches, state, totals);
    } catch (const std::exception& e) {
      try {
        graph->capture_end();  // ends the (invalidated) capture so the stream is usable again
      } catch (...) {
      }
      throw Error(fmt::format(
          "train.cuda_graphs: capturing the training step of batch shape ({}) failed: {}. The "
          "step must not synchronize with the host (Note [Replaying a training step], "
          "include/tts/train/cuda_graph_step.h); set train.cuda_graphs: false to train eagerly",
          shape, e.what()));
    }
    graph->capture_end();
    log::get("train")->info("step {}: captured the training step of batch shape ({}), graph {}",
                            state.step + 1, shape, graphs_.size() + 1);
    return graphs_.emplace(shape, Graph{std::move(graph), step_.captured()}).first->second;
  }

  Step& step_;
  c10::DeviceIndex device_index_;
  c10::cuda::CUDAStream side_;
  c10::MempoolId_t pool_;  // shared by every shape's graph: they replay one at a time
  StaticBatches buffers_;
  std::map<std::string, Graph> graphs_;
};

}  // namespace

std::unique_ptr<GraphedStep> make_cuda_graphed_step(Step& step, const torch::Device& device) {
  return std::make_unique<CudaGraphedStep>(step, device);
}

}  // namespace tts::train
