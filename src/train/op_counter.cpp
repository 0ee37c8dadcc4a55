#include "tts/train/op_counter.h"

#include <ATen/record_function.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "tts/core/error.h"
#include "tts/core/host_read.h"

namespace tts::train {
namespace {

// The counts of the one live counter; callbacks run on any thread.
struct Shared {
  std::mutex mutex;
  OpCounts counts;
  // Open operators and open autograd nodes per thread. A call may end on another thread than the
  // one it started on (a collective ends on its backend's worker thread), so the depths are kept
  // by the starting thread's id, under the mutex, not in a thread_local. A node is top-level when
  // no node is open (an operator may be open around the backward: the step's own bookkeeping);
  // an operator when neither is.
  struct Depth {
    int ops = 0;
    int nodes = 0;
    bool around_backward = false;  // the open top-level operator holds autograd nodes
  };
  std::unordered_map<std::thread::id, Depth> depth;
  std::atomic<bool> active{false};
};

Shared& shared() {
  static Shared state;
  return state;
}

bool starts_with(const char* name, const char* prefix) {
  return std::strncmp(name, prefix, std::strlen(prefix)) == 0;
}

bool is_sync(const char* name) {
  return std::strcmp(name, kHostReadName) == 0 ||
         std::strcmp(name, "aten::_local_scalar_dense") == 0 ||
         std::strcmp(name, "aten::nonzero") == 0 || std::strcmp(name, "aten::masked_select") == 0 ||
         starts_with(name, "aten::unique") || std::strcmp(name, "aten::_unique2") == 0;
}

bool is_allocation(const char* name) {
  return std::strcmp(name, "aten::empty") == 0 || std::strcmp(name, "aten::empty_strided") == 0 ||
         std::strcmp(name, "aten::empty.memory_format") == 0;
}

// What a call carries from its start to its end: the thread that opened it, and the time for a
// top-level one.
struct Call : at::ObserverContext {
  std::thread::id thread;
  bool node = false;
  bool top = false;
  std::chrono::steady_clock::time_point start;
};

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  Shared& state = shared();
  if (!state.active.load(std::memory_order_relaxed)) return nullptr;
  const at::RecordScope scope = fn.scope();
  if (scope != at::RecordScope::FUNCTION && scope != at::RecordScope::BACKWARD_FUNCTION) {
    return nullptr;
  }
  const char* name = fn.name();
  // The autograd engine's record around each node it evaluates: the node is counted by its own
  // record (a backward node, not a forward operator).
  if (scope == at::RecordScope::FUNCTION &&
      starts_with(name, "autograd::engine::evaluate_function")) {
    return nullptr;
  }
  auto call = std::make_unique<Call>();
  call->thread = std::this_thread::get_id();
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    Shared::Depth& depth = state.depth[call->thread];
    call->node = scope == at::RecordScope::BACKWARD_FUNCTION;
    if (call->node) {
      call->top = depth.nodes++ == 0;
      state.counts.backward_nodes += call->top;
      if (call->top) state.counts.backward_by_name[name] += 1;
      // Its time is the nodes': not counted twice.
      if (depth.ops > 0) depth.around_backward = true;
    } else {
      call->top = depth.ops++ == 0 && depth.nodes == 0;
      state.counts.forward_ops += call->top;
      if (call->top) state.counts.forward_by_name[name] += 1;
    }
    if (is_sync(name)) state.counts.syncs[name] += 1;
    if (is_allocation(name)) state.counts.allocations += 1;
  }
  if (call->top) call->start = std::chrono::steady_clock::now();
  return call;
}

void on_end(const at::RecordFunction& fn, at::ObserverContext* context) {
  if (context == nullptr) return;
  const auto* call = static_cast<Call*>(context);
  const double seconds =
      call->top
          ? std::chrono::duration<double>(std::chrono::steady_clock::now() - call->start).count()
          : 0.0;
  Shared& state = shared();
  std::lock_guard<std::mutex> lock(state.mutex);
  Shared::Depth& depth = state.depth[call->thread];
  (call->node ? depth.nodes : depth.ops) -= 1;
  if (!call->node && call->top && depth.around_backward) {
    depth.around_backward = false;
    return;
  }
  state.counts.op_seconds += seconds;
  if (call->top) state.counts.seconds_by_name[fn.name()] += seconds;
}

}  // namespace

int64_t OpCounts::sync_total() const {
  int64_t total = 0;
  for (const auto& [name, count] : syncs) total += count;
  return total;
}

OpCounter::OpCounter() {
  Shared& state = shared();
  TTS_CHECK(!state.active.exchange(true), "OpCounter: another counter is live");
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    state.counts = OpCounts{};
    state.depth.clear();
  }
  handle_ = at::addGlobalCallback(at::RecordFunctionCallback(on_start, on_end));
}

OpCounter::~OpCounter() {
  at::removeCallback(handle_);
  shared().active.store(false);
}

OpCounts OpCounter::counts() const {
  Shared& state = shared();
  std::lock_guard<std::mutex> lock(state.mutex);
  return state.counts;
}

}  // namespace tts::train
