// The LSTM cell's element-wise part as one autograd node. Composed of torch ops it is ~10 nodes
// per cell and step, and at Tacotron's small per-step sizes their overhead, not arithmetic,
// dominates training time; here forward and backward are each one pass over the data on CPU
// (float and double), and a handful of tensor ops elsewhere.
#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <cmath>
#include <tuple>
#include <utility>

#include "autocast.h"
#include "cell_math.h"
#include "fused_backward.h"
#include "fused_kernels.h"
#include "tts/models/tacotron2/layers/layers.h"

namespace tts::tacotron2 {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

bool use_cpu_kernel(const torch::Tensor& gates) {
  return gates.device().is_cpu() &&
         (gates.scalar_type() == torch::kFloat || gates.scalar_type() == torch::kDouble);
}

}  // namespace

namespace detail {

LstmPointwiseForward lstm_pointwise_forward_cpu(const torch::Tensor& gates,
                                                const torch::Tensor& cell,
                                                const torch::Tensor& mask) {
  const bool has_mask = mask.numel() > 0;
  const int64_t batch = gates.size(0), hidden = cell.size(1);
  torch::Tensor activations, c, tanh_c, h;
  activations = torch::empty_like(gates);
  c = torch::empty_like(cell);
  tanh_c = torch::empty_like(cell);
  h = torch::empty_like(cell);
  AT_DISPATCH_FLOATING_TYPES(gates.scalar_type(), "lstm_pointwise_forward", [&] {
    const scalar_t* g = gates.data_ptr<scalar_t>();
    const scalar_t* cp = cell.data_ptr<scalar_t>();
    const scalar_t* m = has_mask ? mask.data_ptr<scalar_t>() : nullptr;
    scalar_t* a = activations.data_ptr<scalar_t>();
    scalar_t* co = c.data_ptr<scalar_t>();
    scalar_t* tc = tanh_c.data_ptr<scalar_t>();
    scalar_t* ho = h.data_ptr<scalar_t>();
    at::parallel_for(0, batch, 16, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        const scalar_t* gb = g + b * 4 * hidden;
        scalar_t* ab = a + b * 4 * hidden;
        for (int64_t j = 0; j < hidden; ++j) {
          const int64_t k = b * hidden + j;
          const cell_math::LstmUnit<scalar_t> u =
              cell_math::lstm_unit_forward(gb[j], gb[hidden + j], gb[2 * hidden + j],
                                           gb[3 * hidden + j], cp[k], m ? m[k] : scalar_t(1));
          cell_math::store_gates(ab, hidden, j, u.i, u.f, u.g, u.o);
          co[k] = u.c;
          tc[k] = u.tanh_c;
          ho[k] = u.h;
        }
      }
    });
  });
  return {activations, c, tanh_c, h};
}

std::pair<torch::Tensor, torch::Tensor> lstm_pointwise_backward_cpu(
    const torch::Tensor& activations, const torch::Tensor& cell, const torch::Tensor& tanh_c,
    const torch::Tensor& mask, const torch::Tensor& grad_h, const torch::Tensor& grad_c) {
  const bool has_mask = mask.numel() > 0;
  const int64_t batch = cell.size(0), hidden = cell.size(1);
  torch::Tensor grad_gates, grad_cell;
  grad_gates = torch::empty_like(activations);
  grad_cell = torch::empty_like(cell);
  AT_DISPATCH_FLOATING_TYPES(activations.scalar_type(), "lstm_pointwise_backward", [&] {
    const scalar_t* a = activations.data_ptr<scalar_t>();
    const scalar_t* cp = cell.data_ptr<scalar_t>();
    const scalar_t* tc = tanh_c.data_ptr<scalar_t>();
    const scalar_t* m = has_mask ? mask.data_ptr<scalar_t>() : nullptr;
    const scalar_t* gh = grad_h.data_ptr<scalar_t>();
    const scalar_t* gc = grad_c.data_ptr<scalar_t>();
    scalar_t* gg = grad_gates.data_ptr<scalar_t>();
    scalar_t* gcp = grad_cell.data_ptr<scalar_t>();
    at::parallel_for(0, batch, 16, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        const scalar_t* ab = a + b * 4 * hidden;
        scalar_t* gb = gg + b * 4 * hidden;
        for (int64_t j = 0; j < hidden; ++j) {
          const int64_t k = b * hidden + j;
          const cell_math::LstmUnitGrad<scalar_t> d = cell_math::lstm_unit_backward(
              ab[j], ab[hidden + j], ab[2 * hidden + j], ab[3 * hidden + j], cp[k], tc[k],
              m ? m[k] : scalar_t(1), gh[k], gc[k]);
          cell_math::store_gates(gb, hidden, j, d.i, d.f, d.g, d.o);
          gcp[k] = d.previous_c;
        }
      }
    });
  });
  return {grad_gates, grad_cell};
}

}  // namespace detail

namespace {

class LSTMPointwise : public torch::autograd::Function<LSTMPointwise> {
 public:
  // gates [B, 4H] (i, f, g, o pre-activations), cell [B, H], mask [B, H] or empty -> h, c.
  static variable_list forward(AutogradContext* ctx, const torch::Tensor& gates_in,
                               const torch::Tensor& cell_in, const torch::Tensor& mask_in) {
    torch::Tensor gates = gates_in.contiguous(), cell = cell_in.contiguous();
    bool has_mask = mask_in.numel() > 0;
    torch::Tensor mask = has_mask ? mask_in.contiguous() : mask_in;
    torch::Tensor activations, c, tanh_c, h;
    if (use_cpu_kernel(gates)) {
      auto out = detail::lstm_pointwise_forward_cpu(gates, cell, mask);
      activations = out.activations;
      c = out.c;
      tanh_c = out.tanh_c;
      h = out.h;
    } else {
      auto chunks = gates.chunk(4, 1);
      activations = torch::cat(
          {chunks[0].sigmoid(), chunks[1].sigmoid(), chunks[2].tanh(), chunks[3].sigmoid()}, 1);
      auto a = activations.chunk(4, 1);
      c = torch::addcmul(a[1] * cell, a[0], a[2]);
      tanh_c = c.tanh();
      h = a[3] * tanh_c;
      if (has_mask) h = h * mask;
    }
    ctx->save_for_backward({activations, cell, tanh_c, mask});
    ctx->saved_data["has_mask"] = has_mask;
    return {h, c};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    detail::check_not_double_backward("LSTMPointwise");
    auto saved = ctx->get_saved_variables();
    const torch::Tensor &activations = saved[0], &cell = saved[1], &tanh_c = saved[2],
                        &mask = saved[3];
    bool has_mask = ctx->saved_data["has_mask"].toBool();
    torch::Tensor grad_h = grads[0].defined() ? grads[0].contiguous() : torch::zeros_like(cell);
    torch::Tensor grad_c = grads[1].defined() ? grads[1].contiguous() : torch::zeros_like(cell);
    torch::Tensor grad_gates, grad_cell;
    if (use_cpu_kernel(activations)) {
      std::tie(grad_gates, grad_cell) =
          detail::lstm_pointwise_backward_cpu(activations, cell, tanh_c, mask, grad_h, grad_c);
    } else {
      auto a = activations.chunk(4, 1);
      torch::Tensor dh = has_mask ? grad_h * mask : grad_h;
      torch::Tensor dc = grad_c + dh * a[3] * (1 - tanh_c.square());
      grad_gates = torch::cat({dc * a[2] * a[0] * (1 - a[0]), dc * cell * a[1] * (1 - a[1]),
                               dc * a[0] * (1 - a[2].square()), dh * tanh_c * a[3] * (1 - a[3])},
                              1);
      grad_cell = dc * a[1];
    }
    return {grad_gates, grad_cell, torch::Tensor()};
  }
};

}  // namespace

std::pair<torch::Tensor, torch::Tensor> lstm_cell_pointwise(const torch::Tensor& gates_in,
                                                            const torch::Tensor& cell_in,
                                                            const torch::Tensor& dropout_mask_in) {
  // In fp32 at least, whatever autocast made of the gates: the cell state is a sum over every
  // step of the utterance (autocast.h).
  detail::NoAutocast no_autocast;
  const torch::Tensor gates = detail::at_least_float(gates_in);
  const torch::Tensor cell = detail::as_type(detail::at_least_float(cell_in), gates.scalar_type());
  const torch::Tensor dropout_mask = detail::as_type(dropout_mask_in, gates.scalar_type());
  if (gates.is_cuda()) {
    // ATen's fused LSTM-cell kernel (one kernel forward, one backward, with its own autograd
    // formula) instead of this node's composed fallback of ~10 kernels each way. It adds two
    // gate inputs; ours are already summed.
    auto [h, c, workspace] = at::_thnn_fused_lstm_cell(gates, torch::zeros_like(gates), cell);
    if (dropout_mask.defined()) h = h * dropout_mask;
    return {h, c};
  }
  torch::Tensor mask = dropout_mask.defined() ? dropout_mask : gates.new_empty({0});
  variable_list out = LSTMPointwise::apply(gates, cell, mask);
  return {out[0], out[1]};
}

}  // namespace tts::tacotron2
