// Gradient all-reduce on 2 (or --ranks N) Gloo ranks on loopback, forked from this process:
//  1. latency and bandwidth of all-reducing Tacotron-2-sized gradients (28.2M floats) in one
//     tensor and in 25 MB buckets, and of a small tensor;
//  2. the exposed communication of a training step (time finish_step() waits after backward)
//     with the bucketed reducer overlapping backward, versus one bucket reduced after backward.
// Usage: bench_allreduce [ranks] [steps] [batch]. Prints Markdown tables for docs/benchmarks.md.
#include <sys/wait.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tts/core/timer.h"
#include "tts/dist/communicator.h"
#include "tts/dist/gradient_reducer.h"
#include "tts/dist/launcher.h"

namespace {

using tts::Stopwatch;
using namespace tts::dist;

constexpr int64_t kTacotronFloats = 28'200'000;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void bench_collectives(Communicator& comm, int repeats) {
  struct Case {
    const char* what;
    std::vector<int64_t> sizes;
  };
  const int64_t bucket = 25'000'000 / 4;
  std::vector<int64_t> bucketed;
  for (int64_t left = kTacotronFloats; left > 0; left -= bucket) {
    bucketed.push_back(std::min(bucket, left));
  }
  const std::vector<Case> cases{{"1 KB (latency)", {256}},
                                {"112.8 MB in one tensor", {kTacotronFloats}},
                                {"112.8 MB in 25 MB buckets, async", bucketed}};
  if (comm.rank() == 0) {
    std::printf("| all-reduce | ranks | median time | algorithm bandwidth | bus bandwidth |\n");
    std::printf("|---|---|---|---|---|\n");
  }
  for (const auto& c : cases) {
    std::vector<torch::Tensor> tensors;
    int64_t floats = 0;
    for (int64_t n : c.sizes) {
      tensors.push_back(torch::ones({n}));
      floats += n;
    }
    std::vector<double> times;
    for (int i = 0; i < repeats + 1; ++i) {
      comm.barrier();
      Stopwatch watch;
      std::vector<std::shared_ptr<Pending>> pending;
      for (auto& t : tensors) {
        std::vector<torch::Tensor> one{t};
        pending.push_back(comm.all_reduce_sum_async(one));
      }
      for (auto& p : pending) p->wait();
      if (i > 0) times.push_back(watch.seconds());
    }
    const double t = median(times);
    const double bytes = static_cast<double>(floats) * 4;
    const int n = comm.size();
    if (comm.rank() == 0) {
      std::printf("| %s | %d | %.3f ms | %.2f GB/s | %.2f GB/s |\n", c.what, n, t * 1e3,
                  bytes / t / 1e9, bytes / t / 1e9 * 2.0 * (n - 1) / n);
    }
  }
}

// ~28.2M parameters in 7 layers, like Tacotron-2's gradient volume (not its compute).
struct Stack : torch::nn::Module {
  Stack() {
    for (int i = 0; i < 7; ++i) {
      layers.push_back(register_module("layer" + std::to_string(i), torch::nn::Linear(2000, 2000)));
    }
    layers.push_back(register_module("head", torch::nn::Linear(2000, 80)));
  }
  torch::Tensor forward(torch::Tensor x) {
    for (size_t i = 0; i + 1 < layers.size(); ++i) x = torch::relu(layers[i]->forward(x));
    return layers.back()->forward(x);
  }
  std::vector<torch::nn::Linear> layers;
};

void bench_overlap(Communicator& comm, int steps, int batch) {
  if (comm.rank() == 0) {
    std::printf(
        "\n| reducer | ranks | step | backward | exposed communication | share of step |\n");
    std::printf("|---|---|---|---|---|---|\n");
  }
  for (bool overlap : {false, true}) {
    torch::manual_seed(0);
    Stack net;
    tts::config::DistributedOptions options;
    options.bucket_mb = overlap ? 25.0 : 1000.0;
    options.first_bucket_mb = overlap ? 1.0 : 1000.0;
    GradientReducer reducer(net.parameters(), comm, options);
    std::vector<double> step_s, backward_s, exposed_s;
    for (int i = 0; i < steps + 1; ++i) {
      comm.barrier();
      Stopwatch step;
      net.zero_grad();
      torch::Tensor loss = net.forward(torch::randn({batch, 2000})).square().mean();
      reducer.begin_step(true);
      Stopwatch backward;
      loss.backward();
      const double b = backward.seconds();
      reducer.finish_step();
      if (i > 0) {
        step_s.push_back(step.seconds());
        backward_s.push_back(b);
        exposed_s.push_back(reducer.last_exposed_comm_seconds());
      }
    }
    if (comm.rank() == 0) {
      const double s = median(step_s), e = median(exposed_s);
      std::printf("| %s | %d | %.1f ms | %.1f ms | %.1f ms | %.0f%% |\n",
                  overlap ? "25 MB buckets (1 MB first), overlapped with backward"
                          : "one bucket after backward (no overlap)",
                  comm.size(), s * 1e3, median(backward_s) * 1e3, e * 1e3, 100.0 * e / s);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int ranks = argc > 1 ? std::atoi(argv[1]) : 2;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 10;
  const int batch = argc > 3 ? std::atoi(argv[3]) : 32;
  const int port = pick_free_port("127.0.0.1");
  std::vector<pid_t> pids;
  for (int rank = 0; rank < ranks; ++rank) {
    const pid_t pid = fork();
    if (pid == 0) {
      torch::set_num_threads(1);
      RankInfo info;
      info.rank = rank;
      info.world_size = ranks;
      info.local_rank = rank;
      info.local_world_size = ranks;
      info.master_port = port;
      tts::config::DistributedOptions options;
      options.timeout_s = 600;
      auto comm = make_communicator(info, options, tts::config::Backend::kGloo);
      bench_collectives(*comm, steps);
      bench_overlap(*comm, steps, batch);
      std::fflush(stdout);
      comm.reset();
      _exit(0);
    }
    pids.push_back(pid);
  }
  int failures = 0;
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    failures += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  return failures == 0 ? 0 : 1;
}
