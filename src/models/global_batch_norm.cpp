#include "tts/models/global_batch_norm.h"

#include <torch/torch.h>

#include <vector>

#include "tts/core/error.h"
#include "tts/dist/communicator.h"

namespace tts::models {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// y = the sum of x over ranks. Its adjoint is the same sum of the gradients: each rank's loss used
// the summed value, so each rank's part of it owes the gradient of every rank's loss (the
// reducer then averages the parameters' gradients, as for any other layer).
class AllReduceSum : public torch::autograd::Function<AllReduceSum> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x,
                               dist::Communicator* comm) {
    ctx->saved_data["comm"] = reinterpret_cast<int64_t>(comm);
    std::vector<torch::Tensor> sum{x.clone()};
    comm->all_reduce_sum(sum);
    return sum[0];
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto* comm = reinterpret_cast<dist::Communicator*>(ctx->saved_data["comm"].toInt());
    std::vector<torch::Tensor> sum{grads[0].contiguous().clone()};
    comm->all_reduce_sum(sum);
    return {sum[0], torch::Tensor()};
  }
};

torch::Tensor sum_over_ranks(const torch::Tensor& x, dist::Communicator& comm) {
  if (comm.size() == 1) return x;
  return AllReduceSum::apply(x, &comm);
}

}  // namespace

torch::Tensor global_batch_norm(torch::nn::BatchNorm1dImpl& norm, const torch::Tensor& x_in,
                                const torch::Tensor& valid_in, dist::Communicator& comm,
                                const torch::Tensor& shift) {
  if (!norm.is_training()) {
    return norm.forward(shift.defined() ? x_in + shift.view({1, -1, 1}) : x_in);
  }
  TTS_CHECK(x_in.dim() == 3, "global BatchNorm: expected [B, C, T], got {}",
            c10::str(x_in.sizes()));
  const bool widen = x_in.scalar_type() != torch::kFloat64;
  const torch::Tensor x = widen ? x_in.to(torch::kFloat32) : x_in;
  const torch::Tensor valid = valid_in.to(x.scalar_type()).expand({x.size(0), 1, x.size(2)});
  const int64_t channels = x.size(1);

  // One all-reduce of [C sums, C sums of squares, the count] of the deviations from a reference
  // every rank holds alike (the running mean, of x without its shift): close to the mean, so that
  // the variance as E[d^2] - E[d]^2 keeps fp32's precision. Its adjoint is one all-reduce too.
  torch::Tensor reference = norm.options.track_running_stats()
                                ? norm.running_mean.detach().to(x.scalar_type())
                                : torch::zeros({channels}, x.options());
  if (shift.defined()) reference = reference - shift.detach().to(x.scalar_type());
  const torch::Tensor deviation = (x - reference.view({1, channels, 1})) * valid;
  const std::vector<int64_t> dims{0, 2};
  const torch::Tensor sums = sum_over_ranks(
      torch::cat({deviation.sum(dims), deviation.pow(2).sum(dims), valid.sum().reshape({1})}),
      comm);
  // Never 0: every utterance has a position (and no host synchronization to check it).
  const torch::Tensor count = sums.narrow(0, 2 * channels, 1).detach();
  const torch::Tensor mean_deviation = sums.narrow(0, 0, channels) / count;
  const torch::Tensor variance =
      torch::clamp_min(sums.narrow(0, channels, channels) / count - mean_deviation.pow(2), 0);
  const torch::Tensor mean = reference + mean_deviation;
  const torch::Tensor centered = x - mean.view({1, channels, 1});

  const auto& options = norm.options;
  torch::Tensor y = centered * torch::rsqrt(variance + options.eps()).view({1, channels, 1});
  if (options.affine()) {
    y = y * norm.weight.view({1, channels, 1}) + norm.bias.view({1, channels, 1});
  }
  if (options.track_running_stats()) {
    torch::NoGradGuard no_grad;
    norm.num_batches_tracked.add_(1);
    const double factor = options.momentum().has_value()
                              ? *options.momentum()
                              : 1.0 / norm.num_batches_tracked.item<double>();
    const torch::Tensor n = count.to(torch::kFloat64);
    const torch::Tensor unbiased =
        variance.detach().to(torch::kFloat64) * n / torch::clamp_min(n - 1, 1);
    torch::Tensor shifted = shift.defined() ? mean.detach() + shift.detach() : mean.detach();
    norm.running_mean.mul_(1 - factor).add_(shifted.to(norm.running_mean.dtype()), factor);
    norm.running_var.mul_(1 - factor).add_(unbiased.to(norm.running_var.dtype()), factor);
  }
  return y;
}

}  // namespace tts::models
