// What libtorch runs during a training iteration, counted for `tts-train bench --profile`: the
// launch-bound cost of a step is in how many operations it issues, not in their arithmetic.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace tts::train {

struct OpCounts {
  // Top-level operators (an operator called by another, or by an autograd node, is not counted
  // again): the forward's, the loss's and the optimizer's; and the autograd nodes the backward
  // runs.
  int64_t forward_ops = 0;
  int64_t backward_nodes = 0;
  // The same two counts by operator or node name: what a step is made of.
  std::map<std::string, int64_t> forward_by_name;
  std::map<std::string, int64_t> backward_by_name;
  // Operators that make the host wait for a device value: .item() (aten::_local_scalar_dense),
  // data-dependent shapes (aten::nonzero, aten::masked_select, aten::unique*), and tts::host_read
  // (tts/core/host_read.h), at any depth, by name.
  std::map<std::string, int64_t> syncs;
  // Tensors created by allocation operators (aten::empty, aten::empty_strided, ...), at any depth.
  int64_t allocations = 0;
  // Seconds inside top-level operators and autograd nodes, summed, and by name: where the time
  // goes (a node's time is its own, the operators it calls included).
  double op_seconds = 0;
  std::map<std::string, double> seconds_by_name;

  int64_t sync_total() const;
};

// Counts from construction to counts() through libtorch's RecordFunction callbacks (every thread).
// One counter at a time.
class OpCounter {
 public:
  OpCounter();
  ~OpCounter();
  OpCounter(const OpCounter&) = delete;
  OpCounter& operator=(const OpCounter&) = delete;
  OpCounts counts() const;

 private:
  uint64_t handle_ = 0;
};

}  // namespace tts::train
