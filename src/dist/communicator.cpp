#include "tts/dist/communicator.h"

#include <fmt/ranges.h>
#include <torch/cuda.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <csignal>
#include <map>
#include <mutex>
#include <thread>

#include "deadline_watchdog.h"
#include "heartbeat.h"
#include "rendezvous_watchdog.h"
#include "tts/core/error.h"
#include "tts/core/logging.h"
#include "tts/core/timer.h"
#include "tts/dist/c10d_compat.h"
#include "tts/dist/launcher.h"
#ifdef TTS_WITH_CUDA
#include "nccl_group.h"
#endif

namespace tts::dist {
namespace {

class LocalCommunicator : public Communicator {
 public:
  explicit LocalCommunicator(torch::Device device) : device_(device) {}
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string backend() const override { return "local"; }
  torch::Device device() const override { return device_; }
  void all_reduce_sum(std::vector<torch::Tensor>&) override {}
  std::shared_ptr<Pending> all_reduce_sum_async(std::vector<torch::Tensor>&) override {
    struct Done : Pending {
      void wait() override {}
    };
    return std::make_shared<Done>();
  }
  void broadcast(std::vector<torch::Tensor>&, int) override {}
  void barrier() override {}
  void wait_for_all(const std::string&) override {}
  std::vector<double> all_gather(const std::vector<double>& values) override { return values; }

 private:
  torch::Device device_;
};

class C10dCommunicator;

class C10dPending : public Pending {
 public:
  C10dPending(C10dCommunicator* comm, std::vector<compat::WorkPtr> works,
              std::vector<std::pair<torch::Tensor, std::vector<torch::Tensor>>> unpack)
      : comm_(comm), works_(std::move(works)), unpack_(std::move(unpack)) {}
  void wait() override;

 private:
  C10dCommunicator* comm_;
  std::vector<compat::WorkPtr> works_;
  // Flat buffers and the tensors they were packed from, copied back after the wait.
  std::vector<std::pair<torch::Tensor, std::vector<torch::Tensor>>> unpack_;
};

class C10dCommunicator : public Communicator {
 public:
  C10dCommunicator(const RankInfo& info, const config::DistributedOptions& options,
                   config::Backend backend, torch::Device device)
      : info_(info),
        timeout_s_(options.timeout_s),
        backend_(config::choice_name(backend)),
        device_(device) {
    auto log = log::get("dist");
    log->info("{}: rendezvous at {}:{} ({} backend, timeout {} s)", info.describe(),
              info.master_addr, info.master_port, backend, timeout_s_);
    compat::quiet_c10_logging(log->level() <= spdlog::level::debug);
    RendezvousWatchdog watchdog(info, timeout_s_);
    watchdog.stage(fmt::format("waiting for the other {} rank(s) at the store at {}:{}",
                               info.world_size - 1, info.master_addr, info.master_port));
    try {
      store_ = compat::make_tcp_store(info.master_addr, info.master_port, info.rank == 0,
                                      info.world_size, timeout_s_);
    } catch (const std::exception& e) {
      throw Error(fmt::format(
          "dist: rank {} could not meet the other {} rank(s) at {}:{} within {} s: {}. Check that "
          "every rank was started with the same MASTER_ADDR/MASTER_PORT, that rank 0 is running "
          "and the port is reachable (and free on rank 0's host); raise distributed.timeout_s "
          "if ranks start far apart",
          info.rank, info.world_size - 1, info.master_addr, info.master_port, timeout_s_,
          compat::message_of(e)));
    }
    watchdog.stage(fmt::format("connecting the {} process group", backend));
    std::string advertised;
    try {
      if (backend == config::Backend::kNccl) {
#ifdef TTS_WITH_CUDA
        group_ = make_nccl_group(store_, info.rank, info.world_size, device_.index(), timeout_s_);
#endif
      } else {
        group_ = compat::make_gloo_group(store_, info.rank, info.world_size, info.master_addr,
                                         timeout_s_, &advertised);
      }
    } catch (const std::exception& e) {
      // A connection between ranks fails when a rank advertised an address the others cannot
      // reach (a second network, loopback): say which one this rank advertised.
      const std::string hint =
          advertised.empty()
              ? ""
              : fmt::format(
                    ". This rank advertised {} to the others; if the ranks reach each other on "
                    "another network, set GLOO_SOCKET_IFNAME to its interface on every host",
                    advertised);
      throw Error(fmt::format("dist: rank {} could not create the {} process group: {}{}",
                              info.rank, backend, compat::message_of(e), hint));
    }
    watchdog.stage("starting the heartbeat");
    deadlines_ = std::make_unique<DeadlineWatchdog>(info.describe());
    calls_ = std::make_unique<GuardedStore>(store_, info, timeout_s_, *deadlines_);
    heartbeat_ = std::make_unique<Heartbeat>(info, timeout_s_, *deadlines_);
    log->info("{}: {} process group of {} ranks ready", info.describe(), backend, info.world_size);
  }

  ~C10dCommunicator() override {
    // Rank 0 hosts the store: it leaves last so that the others' final store calls (and, after a
    // failure, their diagnosis) still find it. After a failure a rank whose collective waits on a
    // peer other than the lost one notices only at its own timeout, then diagnoses for
    // 3 heartbeat intervals: rank 0 waits for that long at most (less when all have diagnosed),
    // or that rank would find the store gone and blame rank 0 for another rank's death.
    const std::string key = failed_ ? "tts/diagnosed" : "tts/finished";
    const int64_t expected = failed_ ? reachable_ranks_ : info_.world_size;
    const double limit_s =
        failed_ ? timeout_s_ + 4 * heartbeat_->interval_s() + 2.0 : std::min(timeout_s_, 10.0);
    // The group goes first: NCCL's may still talk to the store while it shuts down, and the store
    // (rank 0's) must outlive every rank's group.
    {
      auto armed = arm_collective("shutdown of the process group");
      compat::shutdown_group(group_, failed_);
    }
    heartbeat_.reset();
    try {
      if (!failed_) calls_->add(key, 1);
      if (info_.rank == 0) {
        Stopwatch watch;
        while (calls_->add(key, 0) < expected && watch.seconds() < limit_s) {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
      }
    } catch (const std::exception&) {
      // Shutting down: a peer that is gone already has nothing left to tell us.
    }
  }

  int rank() const override { return info_.rank; }
  int size() const override { return info_.world_size; }
  std::string backend() const override { return backend_; }
  torch::Device device() const override { return device_; }

  void all_reduce_sum(std::vector<torch::Tensor>& tensors) override {
    all_reduce_sum_async(tensors)->wait();
  }

  std::shared_ptr<Pending> all_reduce_sum_async(std::vector<torch::Tensor>& tensors) override {
    // c10d reduces one tensor per device per call: tensors of one dtype travel in one flat buffer.
    std::map<c10::ScalarType, std::vector<torch::Tensor>> by_dtype;
    for (auto& t : tensors) {
      check_device(t, "all_reduce_sum");
      by_dtype[t.scalar_type()].push_back(t);
    }
    std::vector<compat::WorkPtr> works;
    std::vector<std::pair<torch::Tensor, std::vector<torch::Tensor>>> unpack;
    for (auto& [dtype, group] : by_dtype) {
      torch::Tensor flat;
      if (group.size() == 1 && group[0].is_contiguous()) {
        flat = group[0];
      } else {
        std::vector<torch::Tensor> views;
        for (auto& t : group) views.push_back(t.reshape({-1}));
        flat = torch::cat(views);
        unpack.emplace_back(flat, group);
      }
      std::vector<torch::Tensor> one{flat};
      works.push_back(guard("all-reduce", [&] { return group_->allreduce(one); }));
    }
    return std::make_shared<C10dPending>(this, std::move(works), std::move(unpack));
  }

  void broadcast(std::vector<torch::Tensor>& tensors, int root) override {
    TTS_CHECK(root >= 0 && root < size(), "dist: broadcast root {} is not a rank of {}", root,
              size());
    std::vector<compat::WorkPtr> works;
    for (auto& t : tensors) {
      check_device(t, "broadcast");
      TTS_CHECK(t.is_contiguous(), "dist: broadcast needs contiguous tensors");
      c10d::BroadcastOptions opts;
      opts.rootRank = root;
      std::vector<torch::Tensor> one{t};
      works.push_back(guard("broadcast", [&] { return group_->broadcast(one, opts); }));
    }
    for (auto& w : works) wait(w, "broadcast");
  }

  void barrier() override {
    // A barrier is an all-reduce of one element: it behaves the same on Gloo and NCCL.
    std::vector<torch::Tensor> one{torch::zeros({1}, torch::TensorOptions().device(device_))};
    all_reduce_sum(one);
  }

  void wait_for_all(const std::string& what) override {
    const std::string key = fmt::format("tts/wait/{}", waits_++);
    const double stale_s = 3 * heartbeat_->interval_s() + 1.0;
    try {
      calls_->add(key, 1);
      std::vector<int64_t> beats(info_.world_size, -1);
      std::vector<Stopwatch> since_beat(info_.world_size);
      Stopwatch poll;
      while (calls_->add(key, 0) < info_.world_size) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        if (poll.seconds() < heartbeat_->interval_s()) continue;
        poll.reset();
        for (int r = 0; r < info_.world_size; ++r) {
          const int64_t beat = calls_->add(Heartbeat::beat_key(r), 0);
          if (beat != beats[r]) {
            beats[r] = beat;
            since_beat[r].reset();
          } else if (since_beat[r].seconds() > stale_s) {
            fail(what.c_str(), fmt::format("rank {} stopped beating while the others waited", r));
          }
        }
      }
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      fail(what.c_str(), e.what());
    }
  }

  std::vector<double> all_gather(const std::vector<double>& values) override {
    const auto n = static_cast<int64_t>(values.size());
    auto opts = torch::TensorOptions().dtype(torch::kFloat64);
    torch::Tensor input =
        torch::from_blob(const_cast<double*>(values.data()), {n}, opts).clone().to(device_);
    std::vector<std::vector<torch::Tensor>> outputs(1);
    for (int r = 0; r < size(); ++r) outputs[0].push_back(torch::empty({n}, opts.device(device_)));
    std::vector<torch::Tensor> inputs{input};
    auto work = guard("all-gather", [&] { return group_->allgather(outputs, inputs); });
    wait(work, "all-gather");
    torch::Tensor all = torch::cat(outputs[0]).to(torch::kCPU);
    return std::vector<double>(all.data_ptr<double>(), all.data_ptr<double>() + all.numel());
  }

  void wait(const compat::WorkPtr& work, const char* what) {
    try {
      auto armed = arm_collective(what);
      work->wait();
    } catch (const std::exception& e) {
      fail(what, e.what());
    }
  }

 private:
  void check_device(const torch::Tensor& t, const char* what) const {
    TTS_CHECK(t.device() == device_,
              "dist: {} got a tensor on {}; the {} backend of this rank works on {}", what,
              t.device().str(), backend_, device_.str());
  }

  template <class Launch>
  compat::WorkPtr guard(const char* what, Launch&& launch) {
    heartbeat_->collective_started();
    try {
      auto armed = arm_collective(what);
      return launch();
    } catch (const std::exception& e) {
      fail(what, e.what());
    }
  }

  // A collective (or the group's shutdown) in flight: the backend gives up after
  // distributed.timeout_s and fail() names the lost rank; should the backend not give up (a wedged
  // driver), the watchdog ends the process half a timeout later, naming the ranks whose heartbeat
  // stopped.
  class ArmedCollective {
   public:
    ArmedCollective(Heartbeat& heartbeat, DeadlineWatchdog::Armed armed)
        : heartbeat_(&heartbeat), armed_(std::move(armed)), wait_(heartbeat.wait_began()) {}
    ~ArmedCollective() { heartbeat_->wait_ended(wait_); }
    ArmedCollective(const ArmedCollective&) = delete;
    ArmedCollective& operator=(const ArmedCollective&) = delete;

   private:
    Heartbeat* heartbeat_;
    DeadlineWatchdog::Armed armed_;
    int64_t wait_;
  };

  ArmedCollective arm_collective(const char* what) {
    const double limit_s = 1.5 * timeout_s_ + 2.0;
    Heartbeat* heartbeat = heartbeat_.get();
    const double stale_s = 3 * heartbeat->interval_s() + 1.0;
    std::string name = what;
    return ArmedCollective(
        *heartbeat, deadlines_->arm(limit_s, [this, heartbeat, stale_s, name](double elapsed_s) {
          const std::vector<std::string> silent = heartbeat->silent_peers(stale_s);
          const std::string blame =
              silent.empty()
                  ? "every rank still sends its heartbeat, so a rank is stuck inside the "
                    "collective (a wedged GPU driver or network)"
                  : fmt::format("silent: {} (stopped, wedged or unreachable; see its log)",
                                fmt::join(silent, ", "));
          return fmt::format(
              "the {} waited {:.1f} s, past distributed.timeout_s = {} s, and the {} backend did "
              "not give up: {}. Ending this rank with exit code 1 so that the launcher or "
              "torchrun stops the job; rerun with --resume auto to continue from the last "
              "checkpoint",
              name, elapsed_s, timeout_s_, backend_, blame);
        }));
  }

  // Turns a backend failure into an Error that names the lost or stuck ranks.
  [[noreturn]] void fail(const char* what, const std::string& cause) {
    failed_ = true;
    const std::string diagnosis = diagnose();
    try {
      calls_->add("tts/diagnosed", 1);
    } catch (const std::exception&) {
      // The store is gone with rank 0; the diagnosis already says so.
    }
    throw Error(fmt::format("dist: {} failed on rank {}: {} (backend said: {})", what, info_.rank,
                            diagnosis, cause));
  }

  std::string diagnose() {
    const int n = info_.world_size;
    std::vector<int64_t> beats_before(n), beats_after(n), started(n);
    try {
      for (int r = 0; r < n; ++r) beats_before[r] = calls_->add(Heartbeat::beat_key(r), 0);
      std::this_thread::sleep_for(std::chrono::duration<double>(3 * heartbeat_->interval_s()));
      for (int r = 0; r < n; ++r) {
        beats_after[r] = calls_->add(Heartbeat::beat_key(r), 0);
        started[r] = calls_->add(Heartbeat::collectives_key(r), 0);
      }
    } catch (const std::exception&) {
      return fmt::format(
          "lost rank 0: the rendezvous store it hosts at {}:{} no longer answers (rank 0 was "
          "killed or crashed; see its log)",
          info_.master_addr, info_.master_port);
    }
    std::vector<int> lost;
    for (int r = 0; r < n; ++r) {
      if (r != info_.rank && beats_after[r] == beats_before[r]) lost.push_back(r);
    }
    const int64_t fewest = *std::min_element(started.begin(), started.end());
    const int64_t most = *std::max_element(started.begin(), started.end());
    // The ranks that will diagnose this failure too: alive and at the failed collective.
    reachable_ranks_ = 0;
    for (int r = 0; r < n; ++r) {
      const bool is_lost = std::find(lost.begin(), lost.end(), r) != lost.end();
      if (!is_lost && started[r] == most) ++reachable_ranks_;
    }
    if (!lost.empty()) {
      return fmt::format(
          "lost rank{} {}: no heartbeat for {:.1f} s (killed, crashed or stopped; see its log)",
          lost.size() > 1 ? "s" : "", join_ranks(lost), 3 * heartbeat_->interval_s());
    }
    if (fewest < most) {
      std::vector<int> behind;
      for (int r = 0; r < n; ++r) {
        if (started[r] == fewest) behind.push_back(r);
      }
      return fmt::format(
          "rank{} {} still alive but behind ({} collectives started, others up to {}): stuck "
          "for more than distributed.timeout_s = {} s, or running different code",
          behind.size() > 1 ? "s" : "", join_ranks(behind), fewest, most, timeout_s_);
    }
    return fmt::format(
        "all ranks alive and at the same collective; it did not complete within "
        "distributed.timeout_s = {} s",
        timeout_s_);
  }

  RankInfo info_;
  double timeout_s_;
  std::string backend_;
  torch::Device device_;
  compat::StorePtr store_;
  compat::GroupPtr group_;
  // Declared before what it watches: destroyed after them.
  std::unique_ptr<DeadlineWatchdog> deadlines_;
  std::unique_ptr<GuardedStore> calls_;  // store_'s calls, each with a deadline
  std::unique_ptr<Heartbeat> heartbeat_;
  bool failed_ = false;
  int64_t reachable_ranks_ = 1;  // after a failure: ranks expected to diagnose it
  int64_t waits_ = 0;            // wait_for_all() calls so far: the same sequence on every rank
};

void C10dPending::wait() {
  for (auto& w : works_) comm_->wait(w, "all-reduce");
  for (auto& [flat, targets] : unpack_) {
    int64_t offset = 0;
    for (auto& t : targets) {
      const int64_t n = t.numel();
      t.copy_(flat.narrow(0, offset, n).view_as(t));
      offset += n;
    }
  }
  works_.clear();
  unpack_.clear();
}

}  // namespace

#ifndef TTS_WITH_CUDA
void check_nccl_headers() {}
#endif

config::Backend resolve_backend(config::Backend configured, config::Device device) {
  if (configured != config::Backend::kAuto) return configured;
#ifdef TTS_WITH_CUDA
  if (device != config::Device::kCpu && torch::cuda::is_available()) return config::Backend::kNccl;
#else
  (void)device;
#endif
  return config::Backend::kGloo;
}

torch::Device rank_device(const RankInfo& info, config::Device device, config::Backend backend) {
  const bool cuda = torch::cuda::is_available();
  TTS_USAGE_CHECK(device != config::Device::kCuda || cuda,
                  "config: train.device = cuda, but no CUDA device is available to this build "
                  "(libtorch {}, {}); set train.device: cpu or auto",
                  TORCH_VERSION,
#ifdef TTS_WITH_CUDA
                  "built with CUDA: check the driver and CUDA_VISIBLE_DEVICES"
#else
                  "built without CUDA"
#endif
  );
  const bool use_cuda = device != config::Device::kCpu && cuda;
  TTS_USAGE_CHECK(backend != config::Backend::kNccl || use_cuda,
                  "dist: the nccl backend works on CUDA devices, but this rank runs on the CPU "
                  "(train.device = {}{}); use --backend gloo",
                  device, cuda ? "" : ", no CUDA device available");
  if (!use_cuda) return torch::Device(torch::kCPU);
  const int gpus = static_cast<int>(torch::cuda::device_count());
  if (info.local_rank >= gpus) {
    TTS_USAGE_CHECK(backend != config::Backend::kNccl,
                    "dist: {} needs a GPU of its own with nccl, but this node shows {} GPU(s) for "
                    "{} local ranks (check CUDA_VISIBLE_DEVICES and --nproc-per-node); NCCL "
                    "refuses two ranks on one GPU: use --backend gloo to share GPUs",
                    info.describe(), gpus, info.local_world_size);
    log::get("dist")->warn("{}: {} GPU(s) for {} local ranks: ranks share GPUs (gloo)",
                           info.describe(), gpus, info.local_world_size);
  }
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(info.local_rank % gpus));
}

std::unique_ptr<Communicator> make_communicator(const RankInfo& info,
                                                const config::DistributedOptions& options,
                                                config::Backend backend, config::Device device,
                                                bool process_group_for_one_rank) {
  return make_communicator(info, options, resolve_placement(info, device, backend),
                           process_group_for_one_rank);
}

std::unique_ptr<Communicator> make_communicator(const RankInfo& info,
                                                const config::DistributedOptions& options,
                                                const Placement& placement,
                                                bool process_group_for_one_rank) {
  // A write to the socket of a rank that died raises SIGPIPE, whose default action ends this
  // process without a word; ignored, the write fails with EPIPE, the collective throws, and the
  // heartbeat diagnosis names the lost rank.
  std::signal(SIGPIPE, SIG_IGN);
  const config::Backend resolved = placement.backend;
  const torch::Device rank_dev = placement.device;
  if (!info.distributed() && !process_group_for_one_rank) {
    return std::make_unique<LocalCommunicator>(rank_dev);
  }
  RankInfo group_info = info;
  if (!info.distributed() && info.master_port <= 0) {
    // One rank with a real group (a check of the Gloo/NCCL path): its own store on loopback.
    group_info.master_addr = "127.0.0.1";
    group_info.master_port = pick_free_port(group_info.master_addr);
  }
  TTS_USAGE_CHECK(group_info.master_port > 0,
                  "dist: a process group of {} rank(s) needs a rendezvous port (MASTER_PORT) for "
                  "rank 0's store",
                  info.world_size);
  return std::make_unique<C10dCommunicator>(group_info, options, resolved, rank_dev);
}

}  // namespace tts::dist
