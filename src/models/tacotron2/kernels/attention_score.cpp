// Location-sensitive attention's scoring of one decoder step as one autograd node:
// weights = softmax_t(masked(v . tanh(location + processed_memory + processed_query))).
// Composed of torch ops this is 6-10 nodes per step (two additions, tanh, the matrix product with
// v, masked_fill, softmax and the views around them); at Tacotron's per-step sizes their
// overhead dominates, so forward and backward are each one pass over [B, A, T_text] on CPU
// (float and double), with the composed ops elsewhere.
#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

#include "autocast.h"
#include "cell_math.h"
#include "fused_backward.h"
#include "fused_kernels.h"
#include "tts/core/cpu_features.h"
#include "tts/models/tacotron2/layers/layers.h"

namespace tts::tacotron2 {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// tanh over a row, in place. float: Eigen's rational approximation (generic_fast_tanh_float,
// within a few ulp of the true value over the whole range) in GCC/Clang vector extensions, 8
// lanes with AVX2 + FMA where the CPU has them (chosen at run time), else 4: libm's scalar tanhf
// was ~8% of a full-size training step. double keeps std::tanh.
typedef float f32x4 __attribute__((vector_size(16)));
typedef int32_t i32x4 __attribute__((vector_size(16)));
typedef float f32x8 __attribute__((vector_size(32)));
typedef int32_t i32x8 __attribute__((vector_size(32)));

// Whole vectors only: n is a multiple of the lane count.
template <class F, class I>
__attribute__((always_inline)) inline void tanh_vectors(float* x, int64_t n) {
  constexpr int64_t kLanes = sizeof(F) / sizeof(float);
  const F zero = {};
  const F high = zero + 7.90531110763549805f, low = zero - 7.90531110763549805f;
  for (int64_t i = 0; i < n; i += kLanes) {
    F v;
    std::memcpy(&v, x + i, sizeof v);
    // mask ? a : b on all-ones / all-zeros lanes, written with bit operations.
#define TTS_SELECT(mask, a, b) \
  reinterpret_cast<F>((reinterpret_cast<I>(a) & (mask)) | (reinterpret_cast<I>(b) & ~(mask)))
    // Beyond +-7.9 the quotient is +-1 to float precision.
    v = TTS_SELECT(v > high, high, v);
    v = TTS_SELECT(v < low, low, v);
    const F v2 = v * v;
    F p = v2 * -2.76076847742355e-16f + 2.00018790482477e-13f;
    p = p * v2 - 8.60467152213735e-11f;
    p = p * v2 + 5.12229709037114e-08f;
    p = p * v2 + 1.48572235717979e-05f;
    p = p * v2 + 6.37261928875436e-04f;
    p = p * v2 + 4.89352455891786e-03f;
    p = p * v;
    F q = v2 * 1.19825839466702e-06f + 1.18534705686654e-04f;
    q = q * v2 + 2.26843463243900e-03f;
    q = q * v2 + 4.89352518554385e-03f;
    // Near zero tanh(v) = v to float precision, where the quotient would lose the last bits.
    const F t = TTS_SELECT(v2 < zero + 1.6e-7f, v, p / q);
#undef TTS_SELECT
    std::memcpy(x + i, &t, sizeof t);
  }
}

template <class F, class I>
__attribute__((always_inline)) inline void tanh_all(float* x, int64_t n) {
  constexpr int64_t kLanes = sizeof(F) / sizeof(float);
  const int64_t whole = n / kLanes * kLanes;
  tanh_vectors<F, I>(x, whole);
  if (whole < n) {  // the last values through one padded vector
    float tail[kLanes] = {};
    std::memcpy(tail, x + whole, static_cast<size_t>(n - whole) * sizeof(float));
    tanh_vectors<F, I>(tail, kLanes);
    std::memcpy(x + whole, tail, static_cast<size_t>(n - whole) * sizeof(float));
  }
}

#if TTS_X86_KERNELS
__attribute__((target("avx2,fma"))) void tanh_avx2(float* x, int64_t n) {
  tanh_all<f32x8, i32x8>(x, n);
}
#endif

void tanh_in_place(float* x, int64_t n) {
#if TTS_X86_KERNELS
  if (cpu::has_avx2_fma()) {
    tanh_avx2(x, n);
    return;
  }
#endif
  tanh_all<f32x4, i32x4>(x, n);
}

void tanh_in_place(double* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = std::tanh(x[i]);
}

bool use_cpu_kernel(const torch::Tensor& x) {
  return x.device().is_cpu() &&
         (x.scalar_type() == torch::kFloat || x.scalar_type() == torch::kDouble);
}

torch::Tensor composed(const torch::Tensor& location, const torch::Tensor& processed,
                       const torch::Tensor& query, const torch::Tensor& v,
                       const torch::Tensor& mask) {
  torch::Tensor energies =
      torch::matmul(v.view({1, -1}), torch::tanh(location + processed + query.unsqueeze(2)));
  return torch::softmax(energies.masked_fill(mask, -std::numeric_limits<double>::infinity()), -1);
}

}  // namespace

namespace detail {

std::pair<torch::Tensor, torch::Tensor> attention_score_forward_cpu(const torch::Tensor& location,
                                                                    const torch::Tensor& processed,
                                                                    const torch::Tensor& query,
                                                                    const torch::Tensor& v,
                                                                    const torch::Tensor& mask) {
  int64_t batch = location.size(0), dim = location.size(1), time = location.size(2);
  torch::Tensor activations = torch::empty_like(location);  // tanh(...) [B, A, T]
  torch::Tensor weights = torch::empty({batch, 1, time}, location.options());
  AT_DISPATCH_FLOATING_TYPES(location.scalar_type(), "attention_score_forward", [&] {
    const scalar_t* l = location.data_ptr<scalar_t>();
    const scalar_t* p = processed.data_ptr<scalar_t>();
    const scalar_t* q = query.data_ptr<scalar_t>();
    const scalar_t* vp = v.data_ptr<scalar_t>();
    const bool* m = mask.data_ptr<bool>();
    scalar_t* th = activations.data_ptr<scalar_t>();
    scalar_t* w = weights.data_ptr<scalar_t>();
    at::parallel_for(0, batch, 1, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        scalar_t* e = w + b * time;
        for (int64_t t = 0; t < time; ++t) e[t] = 0;
        for (int64_t a = 0; a < dim; ++a) {
          int64_t row = (b * dim + a) * time;
          scalar_t qa = q[b * dim + a], va = vp[a];
          for (int64_t t = 0; t < time; ++t) th[row + t] = l[row + t] + p[row + t] + qa;
          tanh_in_place(th + row, time);
          for (int64_t t = 0; t < time; ++t) e[t] += va * th[row + t];
        }
        const bool* mb = m + b * time;
        scalar_t max = -std::numeric_limits<scalar_t>::infinity();
        for (int64_t t = 0; t < time; ++t) {
          if (!mb[t] && e[t] > max) max = e[t];
        }
        scalar_t sum = 0;
        for (int64_t t = 0; t < time; ++t) {
          e[t] = mb[t] ? scalar_t(0) : std::exp(e[t] - max);
          sum += e[t];
        }
        for (int64_t t = 0; t < time; ++t) e[t] /= sum;
      }
    });
  });
  return {activations, weights};
}

std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> attention_score_backward_cpu(
    const torch::Tensor& activations, const torch::Tensor& weights, const torch::Tensor& v,
    const torch::Tensor& grad_weights) {
  int64_t batch = activations.size(0), dim = activations.size(1), time = activations.size(2);
  torch::Tensor grad_sum = torch::empty_like(activations);  // of the tanh argument
  torch::Tensor grad_query = torch::empty({batch, dim}, activations.options());
  torch::Tensor grad_v_parts = torch::empty({batch, dim}, activations.options());
  AT_DISPATCH_FLOATING_TYPES(activations.scalar_type(), "attention_score_backward", [&] {
    const scalar_t* th = activations.data_ptr<scalar_t>();
    const scalar_t* w = weights.data_ptr<scalar_t>();
    const scalar_t* vp = v.data_ptr<scalar_t>();
    const scalar_t* gw = grad_weights.data_ptr<scalar_t>();
    scalar_t* gs = grad_sum.data_ptr<scalar_t>();
    scalar_t* gq = grad_query.data_ptr<scalar_t>();
    scalar_t* gv = grad_v_parts.data_ptr<scalar_t>();
    at::parallel_for(0, batch, 1, [&](int64_t begin, int64_t end) {
      std::vector<scalar_t> grad_energy(time);
      for (int64_t b = begin; b < end; ++b) {
        const scalar_t* wb = w + b * time;
        const scalar_t* gwb = gw + b * time;
        scalar_t dot = 0;
        for (int64_t t = 0; t < time; ++t) dot += wb[t] * gwb[t];
        for (int64_t t = 0; t < time; ++t) grad_energy[t] = wb[t] * (gwb[t] - dot);
        for (int64_t a = 0; a < dim; ++a) {
          int64_t row = (b * dim + a) * time;
          scalar_t va = vp[a], q_sum = 0, v_sum = 0;
          for (int64_t t = 0; t < time; ++t) {
            scalar_t h = th[row + t], de = grad_energy[t];
            scalar_t g = cell_math::score_gradient(de, va, h);
            gs[row + t] = g;
            q_sum += g;
            v_sum += de * h;
          }
          gq[b * dim + a] = q_sum;
          gv[b * dim + a] = v_sum;
        }
      }
    });
  });
  return {grad_sum, grad_query, grad_v_parts.sum(0)};
}

}  // namespace detail

namespace {

class AttentionScore : public torch::autograd::Function<AttentionScore> {
 public:
  // location, processed [B, A, T]; query [B, A]; v [A]; mask [B, 1, T] bool -> weights [B, 1, T].
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& location_in,
                               const torch::Tensor& processed_in, const torch::Tensor& query_in,
                               const torch::Tensor& v_in, const torch::Tensor& mask_in) {
    torch::Tensor location = location_in.contiguous(), processed = processed_in.contiguous();
    torch::Tensor query = query_in.contiguous(), v = v_in.contiguous();
    torch::Tensor mask = detail::as_type(mask_in, torch::kBool).contiguous();
    auto [activations, weights] =
        detail::attention_score_forward_cpu(location, processed, query, v, mask);
    ctx->save_for_backward({activations, weights, v});
    return weights;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    detail::check_not_double_backward("AttentionScore");
    auto saved = ctx->get_saved_variables();
    const torch::Tensor &activations = saved[0], &weights = saved[1], &v = saved[2];
    torch::Tensor grad_weights = grads[0].contiguous();
    auto [grad_sum, grad_query, grad_v] =
        detail::attention_score_backward_cpu(activations, weights, v, grad_weights);
    // location and processed memory enter as a sum: the same gradient for both.
    return {grad_sum, grad_sum, grad_query, grad_v, torch::Tensor()};
  }
};

}  // namespace

torch::Tensor attention_weights(const torch::Tensor& location_in, const torch::Tensor& processed_in,
                                const torch::Tensor& query_in, const torch::Tensor& v_in,
                                const torch::Tensor& mask) {
  // Scores and softmax in fp32 at least, whatever autocast made of the inputs (autocast.h).
  detail::NoAutocast no_autocast;
  const torch::Tensor location = detail::at_least_float(location_in);
  const at::ScalarType dtype = location.scalar_type();
  const torch::Tensor processed = detail::as_type(processed_in, dtype);
  const torch::Tensor query = detail::as_type(query_in, dtype);
  const torch::Tensor v = detail::as_type(v_in, dtype);
  // The kernel reads raw memory: exactly the decoder's shapes, one device and dtype; anything
  // else (broadcast masks, other devices) goes through the composed ops.
  const bool kernel_shapes = location.dim() == 3 && processed.sizes() == location.sizes() &&
                             query.dim() == 2 && query.size(0) == location.size(0) &&
                             query.size(1) == location.size(1) && v.numel() == location.size(1) &&
                             mask.dim() == 3 && mask.size(0) == location.size(0) &&
                             mask.size(1) == 1 && mask.size(2) == location.size(2);
  bool same = true;
  for (const torch::Tensor* t : {&processed, &query, &v}) {
    same = same && t->device() == location.device() && t->scalar_type() == location.scalar_type();
  }
  if (!use_cpu_kernel(location) || !kernel_shapes || !same || !mask.device().is_cpu()) {
    return composed(location, processed, query, v, mask);
  }
  return AttentionScore::apply(location, processed, query, v.reshape({-1}), mask);
}

}  // namespace tts::tacotron2
