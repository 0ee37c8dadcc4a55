#include "tts/dist/replicas.h"

#include <torch/nn/module.h>

#include <cmath>
#include <functional>
#include <map>

#include "tts/core/error.h"
#include "tts/core/logging.h"
#include "tts/dist/rank_info.h"

namespace tts::dist {
namespace {

std::vector<std::pair<std::string, torch::Tensor>> state_of(torch::nn::Module& module) {
  std::vector<std::pair<std::string, torch::Tensor>> state;
  for (auto& item : module.named_parameters(true)) state.emplace_back(item.key(), item.value());
  for (auto& item : module.named_buffers(true)) state.emplace_back(item.key(), item.value());
  return state;
}

}  // namespace

void broadcast_parameters(torch::nn::Module& module, Communicator& comm) {
  if (comm.size() == 1) return;
  torch::NoGradGuard no_grad;
  // One flat buffer per dtype: a handful of collectives instead of one per tensor.
  std::map<c10::ScalarType, std::vector<torch::Tensor>> by_dtype;
  for (auto& [name, t] : state_of(module)) {
    if (t.defined()) by_dtype[t.scalar_type()].push_back(t);
  }
  for (auto& [dtype, tensors] : by_dtype) {
    std::vector<torch::Tensor> views;
    for (auto& t : tensors) views.push_back(t.reshape({-1}));
    std::vector<torch::Tensor> flat{torch::cat(views)};
    comm.broadcast(flat, 0);
    int64_t offset = 0;
    for (auto& t : tensors) {
      t.copy_(flat[0].narrow(0, offset, t.numel()).view_as(t));
      offset += t.numel();
    }
  }
  log::get("dist")->debug("broadcast {} parameter and buffer tensors from rank 0",
                          state_of(module).size());
}

void check_replicas(torch::nn::Module& module, Communicator& comm, int64_t step) {
  if (comm.size() == 1) return;
  torch::NoGradGuard no_grad;
  const auto state = state_of(module);
  std::vector<double> sums;
  for (auto& [name, t] : state) {
    torch::Tensor d = t.detach().to(torch::kCPU, torch::kFloat64);
    sums.push_back(d.sum().item<double>());
    sums.push_back(d.square().sum().item<double>());
  }
  const std::vector<double> all = comm.all_gather(sums);
  const size_t per_rank = sums.size();
  for (size_t i = 0; i < state.size(); ++i) {
    std::vector<int> differing;
    for (int r = 1; r < comm.size(); ++r) {
      for (size_t k = 2 * i; k < 2 * i + 2; ++k) {
        const double a = all[k], b = all[r * per_rank + k];
        // Replicas in sync are bit-identical, so any difference is drift (NaN equals NaN here).
        if (!(a == b) && !(std::isnan(a) && std::isnan(b))) {
          differing.push_back(r);
          break;
        }
      }
    }
    if (!differing.empty()) {
      throw Error(fmt::format(
          "dist: replicas drifted at step {}: parameter '{}' differs between rank 0 (sum {:.9g}) "
          "and rank(s) {} (rank {}: sum {:.9g}). All ranks must apply identical updates: check "
          "that every gradient goes through the reducer and that no rank-local state (e.g. "
          "different configs or random seeds in the optimizer) is involved",
          step, state[i].first, all[2 * i], join_ranks(differing), differing[0],
          all[differing[0] * per_rank + 2 * i]));
    }
  }
}

void check_same_config(const std::string& fingerprint, Communicator& comm) {
  if (comm.size() == 1) return;
  // Two independent 52-bit hashes, exact in a double.
  const uint64_t h1 = std::hash<std::string>{}(fingerprint);
  const uint64_t h2 = std::hash<std::string>{}(fingerprint + "#tts");
  const uint64_t low52 = (uint64_t{1} << 52) - 1;
  const std::vector<double> mine{static_cast<double>(h1 & low52), static_cast<double>(h2 & low52)};
  const std::vector<double> all = comm.all_gather(mine);
  std::vector<int> differing;
  for (int r = 1; r < comm.size(); ++r) {
    if (all[2 * r] != all[0] || all[2 * r + 1] != all[1]) differing.push_back(r);
  }
  if (!differing.empty()) {
    throw UsageError(fmt::format(
        "dist: the resolved config of rank(s) {} differs from rank 0's. Every rank must run the "
        "same config file with the same --set overrides (compare `tts-train config ...` on each "
        "node)",
        join_ranks(differing)));
  }
}

}  // namespace tts::dist
