// Matrix products with a weight that every recurrent step applies (the decoder LSTM cells'
// concatenated weights, the attention's query layer, the encoder BiLSTM's recurrent weights), as
// two autograd nodes that keep the per-step cost to the two products that the recurrence makes
// unavoidable, each of a [B, in] x [in, out] size:
//  - the forward product reads a contiguous [in, out] copy of the weight and the backward input
//    gradient the contiguous [out, in] weight, each by the faster way for its shape
//    (recurrent_product.cpp);
//  - the weight gradient does not feed the recurrence: each step's backward only copies its input
//    rows and output gradient into a buffer of the batch (StepGradient), and every
//    kGradientRows rows the buffer becomes one [in, R] x [R, out] product added to the sum (a
//    BLAS GEMM at full speed), instead of a rank-B update that reads and writes the whole
//    [in, out] gradient each step (25-42 MB per step for the full-size decoder cells) or, as
//    autograd would, a new full-size gradient per step added out of place. The sum reaches the
//    parameters once, through the node that made the per-batch copy.
// Under autocast (autocast.h) the copy is made in autocast's dtype and the products run in it;
// the gradient buffers hold that dtype (each flush's product of up to kGradientRows rows too, as
// a linear's weight gradient under autocast) and their sum stays in the parameters' dtype.
#include <torch/torch.h>

#include <string>
#include <vector>

#include "autocast.h"
#include "fused_backward.h"
#include "fused_kernels.h"
#include "recurrent_product.h"
#include "tts/core/error.h"
#include "tts/models/tacotron2/layers/layers.h"

namespace tts::tacotron2 {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// A tensor kept in saved_data (an undefined one may come back as None).
torch::Tensor saved_tensor(AutogradContext* ctx, const std::string& key) {
  const c10::IValue& value = ctx->saved_data[key];
  return value.isTensor() ? value.toTensor() : torch::Tensor();
}

// A tensor passed to a custom autograd function as a plain argument: no gradient edge.
struct Plain {
  torch::Tensor tensor;
};

// The StepGradient's tensors in and out of an autograd node's saved_data.
void save_gradient(AutogradContext* ctx, const StepGradient& gradient) {
  ctx->saved_data["gradient_sum"] = gradient.sum;
  ctx->saved_data["gradient_inputs"] = gradient.inputs;
  ctx->saved_data["gradient_grads"] = gradient.grads;
  ctx->saved_data["gradient_rows"] = gradient.rows;
}

StepGradient saved_gradient(AutogradContext* ctx) {
  return {saved_tensor(ctx, "gradient_sum"), saved_tensor(ctx, "gradient_inputs"),
          saved_tensor(ctx, "gradient_grads"), saved_tensor(ctx, "gradient_rows")};
}

// sum += a @ b, with a and b in the buffers' dtype, which may be lower than the sum's.
void add_product(torch::Tensor& sum, const torch::Tensor& a, const torch::Tensor& b) {
  if (a.scalar_type() == sum.scalar_type()) {
    sum.addmm_(a, b);
  } else {
    sum.add_(torch::mm(a, b));
  }
}

// Adds the buffered rows' product to the sum and empties the buffer.
void flush(StepGradient& gradient) {
  int64_t& rows = gradient.rows.data_ptr<int64_t>()[0];
  if (rows == 0) return;
  add_product(gradient.sum, gradient.inputs.narrow(0, 0, rows).t(),
              gradient.grads.narrow(0, 0, rows));
  rows = 0;
}

// One step's share of the weight gradient: x [B, in], grad [B, out].
void add_rows(StepGradient& gradient, const torch::Tensor& x, const torch::Tensor& grad) {
  int64_t batch = x.size(0), capacity = gradient.inputs.size(0);
  if (batch >= capacity) {  // a product of full size by itself
    add_product(gradient.sum, x.t(), grad);
    return;
  }
  int64_t& rows = gradient.rows.data_ptr<int64_t>()[0];
  if (rows + batch > capacity) flush(gradient);
  gradient.inputs.narrow(0, rows, batch).copy_(x);
  gradient.grads.narrow(0, rows, batch).copy_(grad);
  rows += batch;
}

// (parts: [out, in_i] tensors; their concatenation `weight` [out, in]; the gradient buffers or
// none) -> [in, out] contiguous copy of weight.t(). Backward hands out the summed gradient (plus
// the incoming one, if anything else used the copy) and clears the sum.
class RecurrentWeightCopy : public torch::autograd::Function<RecurrentWeightCopy> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, at::TensorList parts, Plain weight,
                               const StepGradient& gradient) {
    ctx->set_materialize_grads(false);
    save_gradient(ctx, gradient);
    std::vector<int64_t> widths;
    for (const auto& part : parts) widths.push_back(part.size(1));
    ctx->saved_data["widths"] = widths;
    return weight.tensor.t().clone(at::MemoryFormat::Contiguous);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    detail::check_not_double_backward("RecurrentWeightCopy");
    StepGradient gradient = saved_gradient(ctx);
    std::vector<int64_t> widths = ctx->saved_data["widths"].toIntVector();
    torch::Tensor grad_t = grads[0];  // [in, out]
    if (gradient.defined()) {
      flush(gradient);
      grad_t = grad_t.defined() ? gradient.sum + grad_t : gradient.sum;
    }
    variable_list out(widths.size() + 2);  // one per part; none for the plain arguments
    if (!grad_t.defined()) return out;
    // The parameters' [out, in_i] layout; always copies, as the sum is cleared next.
    int64_t start = 0;
    for (size_t i = 0; i < widths.size(); ++i) {
      out[i] = grad_t.narrow(0, start, widths[i]).t().clone(at::MemoryFormat::Contiguous);
      start += widths[i];
    }
    if (gradient.defined()) gradient.sum.zero_();  // a retained graph's next backward
    return out;
  }
};

// (x [B, in], weight_t [in, out], base: none or one of [B, out] or [out]; the weight [out, in]
// and the gradient buffers or none) -> base + x @ weight_t.
class RecurrentLinear : public torch::autograd::Function<RecurrentLinear> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight_t, at::TensorList base, Plain weight,
                               Plain panels, Plain panels_t, const StepGradient& gradient,
                               RecurrentProductPath path) {
    ctx->save_for_backward({x});
    ctx->saved_data["weight"] = weight.tensor;
    ctx->saved_data["panels"] = panels.tensor;
    save_gradient(ctx, gradient);
    ctx->saved_data["base_dim"] = base.empty() ? int64_t{0} : base[0].dim();
    ctx->saved_data["path"] = static_cast<int64_t>(path);
    return detail::recurrent_product(base.empty() ? torch::Tensor() : base[0], x, weight_t, path,
                                     panels_t.tensor);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    detail::check_not_double_backward("RecurrentLinear");
    torch::Tensor x = ctx->get_saved_variables()[0];
    torch::Tensor grad = grads[0].contiguous();  // [B, out]
    int64_t base_dim = ctx->saved_data["base_dim"].toInt();
    variable_list out(8);  // x, weight_t, the base if any; none for the plain arguments
    if (ctx->needs_input_grad(0)) {
      const auto path = static_cast<RecurrentProductPath>(ctx->saved_data["path"].toInt());
      out[0] = detail::recurrent_product({}, grad, saved_tensor(ctx, "weight"), path,
                                         saved_tensor(ctx, "panels"));
    }
    StepGradient gradient = saved_gradient(ctx);
    if (gradient.defined() && ctx->needs_input_grad(1)) add_rows(gradient, x, grad);
    if (base_dim > 0 && ctx->needs_input_grad(2)) out[2] = base_dim == 1 ? grad.sum(0) : grad;
    return out;
  }
};

}  // namespace

namespace detail {

void add_step_rows(StepGradient& gradient, const torch::Tensor& x, const torch::Tensor& grad) {
  add_rows(gradient, x, grad);
}

}  // namespace detail

RecurrentWeight make_step_weight(RecurrentProductPath path, const torch::Tensor& first,
                                 const torch::Tensor& second) {
  std::vector<torch::Tensor> parts{first};
  if (second.defined()) parts.push_back(second);
  // The products' dtype: autocast's when it is on for this device (an fp32 weight only, as
  // autocast casts).
  at::ScalarType dtype = first.scalar_type();
  if (auto autocast = detail::autocast_dtype(first.device());
      autocast && first.scalar_type() == at::kFloat) {
    dtype = *autocast;
  }
  detail::NoAutocast no_autocast;
  RecurrentWeight w;
  w.path = path;
  {
    torch::NoGradGuard no_grad;
    // A copy also with one part: backward must see the values of this forward, whatever later
    // changes the parameter in place (a plain alias would escape autograd's version check).
    w.weight = parts.size() > 1
                   ? torch::cat(parts, 1).to(dtype).contiguous()
                   : first.to(dtype, false, /*copy=*/true, at::MemoryFormat::Contiguous);
  }
  bool needs_grad = torch::GradMode::is_enabled() &&
                    (first.requires_grad() || (second.defined() && second.requires_grad()));
  if (needs_grad) {
    int64_t out = w.weight.size(0), in = w.weight.size(1);
    w.gradient.sum = torch::zeros({in, out}, first.options());
    w.gradient.inputs = torch::empty({kGradientRows, in}, w.weight.options());
    w.gradient.grads = torch::empty({kGradientRows, out}, w.weight.options());
    w.gradient.rows = torch::zeros({1}, torch::kInt64);
  }
  w.weight_t = RecurrentWeightCopy::apply(at::TensorList(parts), Plain{w.weight}, w.gradient);
  // The panels of the forward's operand, and of the backward's where a backward may run (an
  // input may need a gradient with the parameters frozen).
  w.panels_t = detail::kernel_panels(w.weight_t.detach(), path);
  if (torch::GradMode::is_enabled()) w.panels = detail::kernel_panels(w.weight, path);
  return w;
}

torch::Tensor recurrent_linear(const RecurrentWeight& w, const torch::Tensor& base,
                               const torch::Tensor& x) {
  TTS_CHECK(!base.defined() || base.dim() >= 1,
            "recurrent_linear: the base must be [out] or [B, out], got a 0-dim tensor");
  // In the weight's dtype (autocast's, if it was on when the weight was made), autocast off inside.
  const at::ScalarType dtype = w.weight.scalar_type();
  detail::NoAutocast no_autocast;
  std::vector<torch::Tensor> bases;
  if (base.defined()) bases.push_back(detail::as_type(base, dtype));
  return RecurrentLinear::apply(detail::as_type(x, dtype), w.weight_t, at::TensorList(bases),
                                Plain{w.weight}, Plain{w.panels}, Plain{w.panels_t}, w.gradient,
                                w.path);
}

}  // namespace tts::tacotron2
