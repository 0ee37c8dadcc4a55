// Matrix products with a weight that every recurrent step applies (the decoder LSTM cells'
// concatenated weights, the attention's query layer, the encoder BiLSTM's recurrent weights), as
// two autograd nodes that keep the per-step cost to the two unavoidable products of a
// [B, in] x [in, out] size and one in-place weight-gradient update:
//  - the forward product reads a contiguous [in, out] copy of the weight and the backward input
//    gradient the contiguous [out, in] weight: the layouts in which a BLAS call walks memory
//    with unit stride (x @ W.t() on a row-major W is a strided dot-product loop, markedly slower
//    with the reference BLAS Debian's libtorch links to);
//  - the weight gradient is accumulated in place into one [in, out] buffer per utterance batch
//    (a CPU kernel below, or addmm_ with beta = 1) instead of each step's backward producing a
//    full-size gradient that autograd then adds out of place into the running sum (a full-size
//    allocation and a pass over the weight per step); the buffer reaches the parameters once,
//    through the node that made the per-batch copy.
#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "fused_backward.h"
#include "tts/core/error.h"
#include "tts/model/layers.h"

namespace tts::model {
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

// (parts: [out, in_i] tensors; their concatenation `weight` [out, in]; the accumulator [in, out]
// or undefined) -> [in, out] contiguous copy of weight.t(). Backward hands out the accumulated
// gradient (plus the incoming one, if anything else used the copy) and clears the accumulator.
class StepWeightCopy : public torch::autograd::Function<StepWeightCopy> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, at::TensorList parts, Plain weight,
                               Plain accumulator) {
    ctx->set_materialize_grads(false);
    ctx->saved_data["accumulator"] = accumulator.tensor;
    std::vector<int64_t> widths;
    for (const auto& part : parts) widths.push_back(part.size(1));
    ctx->saved_data["widths"] = widths;
    return weight.tensor.t().clone(at::MemoryFormat::Contiguous);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    detail::check_not_double_backward("StepWeightCopy");
    torch::Tensor accumulator = saved_tensor(ctx, "accumulator");
    std::vector<int64_t> widths = ctx->saved_data["widths"].toIntVector();
    torch::Tensor grad_t = grads[0];  // [in, out]
    if (accumulator.defined()) grad_t = grad_t.defined() ? accumulator + grad_t : accumulator;
    variable_list out(widths.size() + 2);  // one per part; none for the plain arguments
    if (!grad_t.defined()) return out;
    // The parameters' [out, in_i] layout; always copies, as the accumulator is cleared next.
    int64_t start = 0;
    for (size_t i = 0; i < widths.size(); ++i) {
      out[i] = grad_t.narrow(0, start, widths[i]).t().clone(at::MemoryFormat::Contiguous);
      start += widths[i];
    }
    if (accumulator.defined()) accumulator.zero_();  // a retained graph's next backward
    return out;
  }
};

// The three products for a few rows (the batch) on CPU, float and double: each streams the
// large operand once with unit stride (the small ones stay in cache), so they run at memory
// speed, where a general GEMM (Debian's libtorch uses the reference BLAS) is compute-bound.
// Measured against that BLAS (tts-train bench, 1 thread): 1.9x faster steps at batch 32 (full
// dims) and 1.7x at batch 64 (tiny dims); above 128 rows libtorch's GEMM takes over, as a blocked
// BLAS would win there.
constexpr int64_t kMaxKernelRows = 128;

bool use_cpu_kernel(const torch::Tensor& x, const torch::Tensor& weight) {
  return x.device().is_cpu() && weight.device() == x.device() && x.size(0) <= kMaxKernelRows &&
         x.scalar_type() == weight.scalar_type() &&
         (x.scalar_type() == torch::kFloat || x.scalar_type() == torch::kDouble);
}

// out [M, N] += a [M, K] @ b [K, N]; all contiguous.
template <class T>
void accumulate_product(int64_t rows, int64_t n, int64_t k, const T* a, const T* b, T* out) {
  at::parallel_for(0, n, 2048, [&](int64_t begin, int64_t end) {
    for (int64_t l = 0; l < k; ++l) {
      const T* __restrict bl = b + l * n;
      for (int64_t m = 0; m < rows; ++m) {
        T coefficient = a[m * k + l];
        T* __restrict o = out + m * n;
        for (int64_t j = begin; j < end; ++j) o[j] += coefficient * bl[j];
      }
    }
  });
}

// out [K, N] += a [M, K]^T @ b [M, N]; all contiguous.
template <class T>
void accumulate_outer(int64_t rows, int64_t n, int64_t k, const T* a, const T* b, T* out) {
  at::parallel_for(0, k, 64, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      T* __restrict o = out + i * n;
      for (int64_t m = 0; m < rows; ++m) {
        T coefficient = a[m * k + i];
        const T* __restrict bm = b + m * n;
        for (int64_t j = 0; j < n; ++j) o[j] += coefficient * bm[j];
      }
    }
  });
}

// base (undefined, [N] or [M, N]) + a [M, K] @ b [K, N] (b contiguous).
torch::Tensor product(const torch::Tensor& base, const torch::Tensor& a_in,
                      const torch::Tensor& b) {
  torch::Tensor a = a_in.contiguous();
  int64_t rows = a.size(0), k = a.size(1), n = b.size(1);
  torch::Tensor out = base.defined() ? base.expand({rows, n}).clone(at::MemoryFormat::Contiguous)
                                     : torch::zeros({rows, n}, a.options());
  AT_DISPATCH_FLOATING_TYPES(a.scalar_type(), "step_linear_product", [&] {
    accumulate_product(rows, n, k, a.data_ptr<scalar_t>(), b.data_ptr<scalar_t>(),
                       out.data_ptr<scalar_t>());
  });
  return out;
}

// (x [B, in], weight_t [in, out], base: none or one of [B, out] or [out]; the weight [out, in]
// and the accumulator [in, out] or undefined) -> base + x @ weight_t.
class StepLinear : public torch::autograd::Function<StepLinear> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight_t, at::TensorList base, Plain weight,
                               Plain accumulator) {
    ctx->save_for_backward({x});
    ctx->saved_data["weight"] = weight.tensor;
    ctx->saved_data["accumulator"] = accumulator.tensor;
    ctx->saved_data["base_dim"] = base.empty() ? int64_t{0} : base[0].dim();
    if (use_cpu_kernel(x, weight_t))
      return product(base.empty() ? torch::Tensor() : base[0], x, weight_t);
    return base.empty() ? torch::mm(x, weight_t) : torch::addmm(base[0], x, weight_t);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    detail::check_not_double_backward("StepLinear");
    torch::Tensor x = ctx->get_saved_variables()[0];
    torch::Tensor grad = grads[0].contiguous();  // [B, out]
    torch::Tensor accumulator = saved_tensor(ctx, "accumulator");
    int64_t base_dim = ctx->saved_data["base_dim"].toInt();
    variable_list out(5);  // x, weight_t, the base if any; none for the plain arguments
    bool kernel = use_cpu_kernel(grad, x);
    if (ctx->needs_input_grad(0)) {
      torch::Tensor weight = saved_tensor(ctx, "weight");
      out[0] = kernel ? product({}, grad, weight) : grad.mm(weight);
    }
    if (accumulator.defined() && ctx->needs_input_grad(1)) {
      if (kernel) {
        torch::Tensor xc = x.contiguous();
        AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "step_linear_weight_grad", [&] {
          accumulate_outer(xc.size(0), grad.size(1), xc.size(1), xc.data_ptr<scalar_t>(),
                           grad.data_ptr<scalar_t>(), accumulator.data_ptr<scalar_t>());
        });
      } else {
        accumulator.addmm_(x.t(), grad);
      }
    }
    if (base_dim > 0 && ctx->needs_input_grad(2)) out[2] = base_dim == 1 ? grad.sum(0) : grad;
    return out;
  }
};

}  // namespace

StepWeight make_step_weight(const torch::Tensor& first, const torch::Tensor& second) {
  std::vector<torch::Tensor> parts{first};
  if (second.defined()) parts.push_back(second);
  StepWeight w;
  {
    torch::NoGradGuard no_grad;
    // A copy also with one part: backward must see the values of this forward, whatever later
    // changes the parameter in place (a plain alias would escape autograd's version check).
    w.weight = parts.size() > 1 ? torch::cat(parts, 1).contiguous()
                                : first.clone(at::MemoryFormat::Contiguous);
  }
  bool needs_grad = torch::GradMode::is_enabled() &&
                    (first.requires_grad() || (second.defined() && second.requires_grad()));
  if (needs_grad) {
    w.accumulator = torch::zeros({w.weight.size(1), w.weight.size(0)}, w.weight.options());
  }
  w.weight_t = StepWeightCopy::apply(at::TensorList(parts), Plain{w.weight}, Plain{w.accumulator});
  return w;
}

torch::Tensor step_linear(const StepWeight& w, const torch::Tensor& base, const torch::Tensor& x) {
  TTS_CHECK(!base.defined() || base.dim() >= 1,
            "step_linear: the base must be [out] or [B, out], got a 0-dim tensor");
  std::vector<torch::Tensor> bases;
  if (base.defined()) bases.push_back(base);
  return StepLinear::apply(x, w.weight_t, at::TensorList(bases), Plain{w.weight},
                           Plain{w.accumulator});
}

}  // namespace tts::model
