#include "tts/dist/gradient_reducer.h"

#include <torch/torch.h>

#include <mutex>

#include "tts/core/error.h"
#include "tts/core/host_read.h"
#include "tts/core/logging.h"
#include "tts/core/timer.h"

namespace tts::dist {

struct GradientReducer::State {
  struct Slot {
    torch::Tensor param;
    int bucket = 0;
    int64_t offset = 0;  // in the bucket's flat buffer, elements
    unsigned hook = 0;   // handle for remove_hook
    bool ready = false;  // gradient copied into the bucket this step
    bool used = false;   // got a gradient this step (this micro-batch or earlier ones)
  };
  struct Bucket {
    torch::Tensor flat;  // [numel], the parameters' dtype and device
    std::vector<int> slots;
    int missing = 0;  // slots not ready yet
    bool launched = false;
    std::shared_ptr<Pending> pending;
  };

  Communicator* comm = nullptr;
  std::vector<Slot> slots;
  std::vector<Bucket> buckets;
  std::mutex mutex;  // hooks may run on autograd's device threads
  bool reducing = false;
  int next_launch = 0;
  double exposed_s = 0;
  bool stop_agreed = false;
  // Note [Used parameters]: a parameter no rank gave a gradient keeps grad undefined, as in one
  // process (the optimizer skips it). Which parameters a step uses is fixed by the family and
  // its config, so it is learned from the first reducing step (one host read per reducer and
  // run), and later steps read nothing: the parameters learned as used always get the reduced
  // gradient, and used_mask() tells the optimizer on the device which of them no rank used in a
  // step (left alone: weight, moments, step count; their zero gradient adds 0 to the clip's
  // norm). A parameter learned as unused that gets a gradient later is noticed at settle(),
  // logged, and the used set learned again (its gradients in between are dropped). `used_flags`
  // ([n + 1] on the device: this rank's used slots, then its stop wish) is rewritten only where
  // this rank's pattern changes; `counts` is the last step's all-reduced copy.
  bool learned = false;
  std::vector<bool> learned_used;
  std::vector<bool> host_flags;  // what used_flags holds
  torch::Tensor used_flags, counts, never_used;
  // Until settle(): the stop counts summed over the reducing steps, and whether a parameter no
  // rank used in the learning step got a gradient since. Made once and added into, zeroed in
  // place by settle(): a replayed CUDA graph of a step adds into the memory settle() reads.
  torch::Tensor stop_sum, surprise;
  bool ever_reduced = false;  // settle() has something to read

  // this rank's stop wish into used_flags' last element, written only when it changes.
  void write_stop_wish(bool stop) {
    const size_t n = slots.size();
    if (host_flags[n] == stop) return;
    used_flags[static_cast<int64_t>(n)].fill_(stop ? 1 : 0);
    host_flags[n] = stop;
  }
  // Per optimizer parameter list: where each one's slot is in `counts` (n: not reduced).
  std::vector<torch::TensorImpl*> mask_for;
  torch::Tensor mask_index;

  void on_gradient(int index, const torch::Tensor& grad) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!reducing) return;
    Slot& slot = slots[index];
    TTS_CHECK(!slot.ready,
              "dist: parameter {} got a second gradient in one reducing backward pass; run "
              "backward once per micro-batch (begin_step before each)",
              index);
    Bucket& bucket = buckets[slot.bucket];
    torch::Tensor dst = bucket.flat.narrow(0, slot.offset, grad.numel());
    // The hook sees this micro-batch's gradient before it is added to .grad, which holds the
    // earlier micro-batches' sum under accumulation.
    const torch::Tensor& earlier = slot.param.grad();
    if (earlier.defined()) {
      torch::add_out(dst, earlier.reshape({-1}), grad.reshape({-1}));
    } else {
      dst.copy_(grad.reshape({-1}));
    }
    slot.ready = true;
    slot.used = true;
    --bucket.missing;
    launch_ready_buckets();
  }

  // Launches buckets strictly in index order, so every rank issues the same sequence.
  void launch_ready_buckets() {
    while (next_launch < static_cast<int>(buckets.size()) && buckets[next_launch].missing == 0) {
      Bucket& bucket = buckets[next_launch];
      std::vector<torch::Tensor> one{bucket.flat};
      bucket.pending = comm->all_reduce_sum_async(one);
      bucket.launched = true;
      ++next_launch;
    }
  }

  // Parameters without a gradient in this backward pass: their slot carries what earlier
  // micro-batches accumulated, or zeros, so every rank launches every bucket. Called under `mutex`.
  void fill_unready_slots() {
    for (auto& slot : slots) {
      if (slot.ready) continue;
      Bucket& bucket = buckets[slot.bucket];
      torch::Tensor dst = bucket.flat.narrow(0, slot.offset, slot.param.numel());
      const torch::Tensor& grad = slot.param.grad();
      if (grad.defined()) {
        dst.copy_(grad.reshape({-1}));
      } else {
        dst.zero_();
      }
      slot.ready = true;
      --bucket.missing;
    }
  }

  // This rank's used slots into used_flags, written only where they changed since the last step.
  void write_used_flags() {
    const size_t n = slots.size();
    for (size_t i = 0; i < n; ++i) {
      if (slots[i].used != host_flags[i]) {
        used_flags[static_cast<int64_t>(i)].fill_(slots[i].used ? 1 : 0);
        host_flags[i] = slots[i].used;
      }
    }
  }

  // Sets the parameters learned as used to their reduced gradients; drops the others' gradients.
  void write_reduced_gradients() {
    const size_t n = slots.size();
    for (size_t i = 0; i < n; ++i) {
      Slot& slot = slots[i];
      if (!learned_used[i]) {
        // Learned as unused: a local gradient (this rank used it after all) is dropped on every
        // rank alike, until settle() learns again.
        slot.param.mutable_grad() = torch::Tensor();
        continue;
      }
      torch::Tensor reduced =
          buckets[slot.bucket].flat.narrow(0, slot.offset, slot.param.numel()).view_as(slot.param);
      torch::Tensor& grad = slot.param.mutable_grad();
      if (grad.defined()) {
        grad.copy_(reduced);
      } else {
        grad = reduced.clone();
      }
    }
  }
};

GradientReducer::GradientReducer(std::vector<torch::Tensor> parameters, Communicator& comm,
                                 const config::DistributedOptions& options)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.comm = &comm;
  for (auto it = parameters.rbegin(); it != parameters.rend(); ++it) {
    if (!it->requires_grad()) continue;
    TTS_CHECK(it->device() == comm.device(),
              "dist: a parameter lives on {} but the {} communicator works on {}; move the model "
              "to the rank's device before creating the reducer",
              it->device().str(), comm.backend(), comm.device().str());
    State::Slot slot;
    slot.param = *it;
    s.slots.push_back(slot);
  }
  // Buckets in reverse registration order: the first holds the last layers, whose gradients
  // backward produces first; it is kept small so communication starts early.
  std::vector<int64_t> numels;
  int64_t bucket_bytes = 0;
  double limit_mb = options.first_bucket_mb;
  for (size_t i = 0; i < s.slots.size(); ++i) {
    const torch::Tensor& p = s.slots[i].param;
    const int64_t bytes = p.numel() * static_cast<int64_t>(p.element_size());
    const bool new_bucket =
        s.buckets.empty() || s.buckets.back().flat.scalar_type() != p.scalar_type() ||
        (bucket_bytes > 0 && static_cast<double>(bucket_bytes + bytes) > limit_mb * 1e6);
    if (new_bucket) {
      if (!s.buckets.empty()) limit_mb = options.bucket_mb;
      s.buckets.emplace_back();
      s.buckets.back().flat = torch::empty({0}, p.options().requires_grad(false));
      numels.push_back(0);
      bucket_bytes = 0;
    }
    s.slots[i].bucket = static_cast<int>(s.buckets.size()) - 1;
    s.slots[i].offset = numels.back();
    s.buckets.back().slots.push_back(static_cast<int>(i));
    numels.back() += p.numel();
    bucket_bytes += bytes;
  }
  const auto on_device = torch::TensorOptions().device(comm.device());
  s.used_flags =
      torch::zeros({static_cast<int64_t>(s.slots.size() + 1)}, on_device.dtype(torch::kFloat32));
  s.host_flags.assign(s.slots.size() + 1, false);
  s.stop_sum = torch::zeros({}, on_device.dtype(torch::kFloat32));
  s.surprise = torch::zeros({}, on_device.dtype(torch::kBool));
  for (size_t b = 0; b < s.buckets.size(); ++b) {
    s.buckets[b].flat = torch::zeros({numels[b]}, s.buckets[b].flat.options());
  }
  if (comm.size() > 1) {
    for (size_t i = 0; i < s.slots.size(); ++i) {
      State* state = state_.get();
      const int index = static_cast<int>(i);
      s.slots[i].hook = s.slots[i].param.register_hook([state, index](torch::Tensor grad) {
        state->on_gradient(index, grad);
        return grad;
      });
    }
  }
  int64_t total = 0;
  for (int64_t n : numels) total += n;
  log::get("dist")->debug("gradient reducer: {} parameters ({} values) in {} buckets",
                          s.slots.size(), total, s.buckets.size());
}

GradientReducer::~GradientReducer() {
  if (state_->comm->size() > 1) {
    for (auto& slot : state_->slots) slot.param.remove_hook(slot.hook);
  }
}

void GradientReducer::begin_step(bool reduce_this_micro_batch) {
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mutex);
  s.reducing = reduce_this_micro_batch && s.comm->size() > 1;
  if (!s.reducing) return;
  for (auto& slot : s.slots) {
    slot.ready = false;
    slot.used = slot.param.grad().defined();
  }
  for (auto& bucket : s.buckets) {
    bucket.missing = static_cast<int>(bucket.slots.size());
    bucket.launched = false;
    bucket.pending.reset();
  }
  s.next_launch = 0;
}

void GradientReducer::set_stop_wish(bool stop_requested) {
  state_->write_stop_wish(stop_requested);
}

void GradientReducer::finish_step(bool stop_requested) {
  State& s = *state_;
  if (!s.reducing) {
    s.exposed_s = 0;
    s.stop_agreed = stop_requested;
    return;
  }
  Stopwatch watch;
  std::shared_ptr<Pending> used_pending;
  torch::Tensor used_counts;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.reducing = false;
    s.fill_unready_slots();
    s.launch_ready_buckets();
    // How many ranks gave each parameter a gradient, and the last element the ranks that want to
    // stop: written on the device only where this rank's pattern changed (no copy from host
    // memory, which would synchronize).
    s.write_used_flags();
    s.write_stop_wish(stop_requested);
    used_counts = s.used_flags.clone();
    std::vector<torch::Tensor> one{used_counts};
    used_pending = s.comm->all_reduce_sum_async(one);
  }
  for (auto& bucket : s.buckets) bucket.pending->wait();
  used_pending->wait();
  // NCCL's wait() only orders the current stream after the all-reduce: the exposed time is the
  // host's wait (on CUDA, not the device's completion: waiting for that would synchronize).
  s.exposed_s = watch.seconds();

  const double world = static_cast<double>(s.comm->size());
  torch::NoGradGuard no_grad;
  for (auto& bucket : s.buckets) bucket.flat.div_(world);
  const size_t n = s.slots.size();
  s.counts = used_counts;
  const torch::Tensor used_by = used_counts.narrow(0, 0, static_cast<int64_t>(n)) > 0;
  const torch::Tensor stop = used_counts.narrow(0, static_cast<int64_t>(n), 1).sum();
  s.stop_sum.add_(stop);
  s.ever_reduced = true;
  if (!s.learned) {
    // Note [Used parameters]: the one host read of the run.
    const torch::Tensor read = host_read(used_by);
    const bool* used = read.data_ptr<bool>();
    s.learned_used.assign(used, used + n);
    s.never_used = used_by.logical_not();
    s.learned = true;
  } else {
    const torch::Tensor surprise = used_by.logical_and(s.never_used).any();
    s.surprise.logical_or_(surprise);
  }
  s.write_reduced_gradients();
}

torch::Tensor GradientReducer::used_mask(const std::vector<torch::Tensor>& parameters) {
  State& s = *state_;
  if (!s.counts.defined()) return {};
  const int64_t n = static_cast<int64_t>(s.slots.size());
  std::vector<torch::TensorImpl*> impls;
  for (const torch::Tensor& p : parameters) impls.push_back(p.unsafeGetTensorImpl());
  if (impls != s.mask_for) {
    // Built once per parameter list: a copy from host memory.
    std::vector<int64_t> index;
    for (torch::TensorImpl* impl : impls) {
      int64_t at = n;
      for (int64_t i = 0; i < n; ++i) {
        if (s.slots[i].param.unsafeGetTensorImpl() == impl) at = i;
      }
      index.push_back(at);
    }
    s.mask_index = torch::tensor(index, torch::kLong).to(s.comm->device());
    s.mask_for = impls;
  }
  // The slots' counts, and 1 for a parameter the reducer does not hold (frozen).
  const torch::Tensor counts =
      torch::cat({s.counts.narrow(0, 0, n), torch::ones({1}, s.counts.options())});
  return (counts.index_select(0, s.mask_index) > 0).to(torch::kFloat64);
}

void GradientReducer::settle() {
  State& s = *state_;
  if (!s.ever_reduced) return;
  const torch::Tensor read =
      host_read(torch::cat({s.stop_sum.reshape({1}), s.surprise.to(torch::kFloat32).reshape({1})}));
  const float* v = read.data_ptr<float>();
  s.stop_agreed = v[0] > 0.0f;
  if (v[1] != 0.0f) {
    // A parameter no rank used in the learning step got a gradient since: its gradients of the
    // steps in between were not applied. Learn again at the next step.
    log::get("dist")->warn(
        "a parameter that no rank used in the first reduced step got a gradient later; its "
        "gradients since the last report were dropped; the reducer learns the used parameters "
        "again");
    s.learned = false;
  }
  s.stop_sum.zero_();
  s.surprise.zero_();
}

bool GradientReducer::stop_agreed() const { return state_->stop_agreed; }

double GradientReducer::last_exposed_comm_seconds() const { return state_->exposed_s; }

std::vector<int64_t> GradientReducer::bucket_sizes() const {
  std::vector<int64_t> sizes;
  for (auto& bucket : state_->buckets) sizes.push_back(bucket.flat.numel());
  return sizes;
}

}  // namespace tts::dist
