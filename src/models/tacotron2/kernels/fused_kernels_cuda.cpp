// The fused decoder step's kernels on CUDA (fused_kernels.h, StepKernels): tensors in and out of
// decoder_step_kernels.cu's launches, on the current stream of the tensors' device. Built only
// with CUDA.
#include <ATen/Dispatch.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/torch.h>

#include <tuple>
#include <utility>

#include "decoder_step_kernels.h"
#include "fused_kernels.h"
#include "tts/core/error.h"

namespace tts::tacotron2::detail {
namespace {

void check_launch(int error, const char* kernel) {
  TTS_CHECK(error == 0, "the fused decoder step's CUDA kernel {} failed: {}", kernel,
            cuda_kernels::error_string(error));
}

void* stream_of(const torch::Tensor& t) {
  return c10::cuda::getCurrentCUDAStream(t.device().index()).stream();
}

// The data of a tensor that may be absent (undefined, or the empty stand-in for no mask).
template <class T>
const T* data_or_null(const torch::Tensor& t) {
  return t.defined() && t.numel() > 0 ? t.data_ptr<T>() : nullptr;
}

LstmPointwiseForward lstm_forward_cuda(const torch::Tensor& gates, const torch::Tensor& cell,
                                       const torch::Tensor& mask) {
  const c10::cuda::CUDAGuard guard(gates.device());
  const int64_t batch = cell.size(0), hidden = cell.size(1);
  LstmPointwiseForward out{torch::empty_like(gates), torch::empty_like(cell),
                           torch::empty_like(cell), torch::empty_like(cell)};
  AT_DISPATCH_FLOATING_TYPES(gates.scalar_type(), "lstm_forward_cuda", [&] {
    check_launch(cuda_kernels::lstm_forward<scalar_t>(
                     gates.data_ptr<scalar_t>(), cell.data_ptr<scalar_t>(),
                     data_or_null<scalar_t>(mask), out.activations.data_ptr<scalar_t>(),
                     out.c.data_ptr<scalar_t>(), out.tanh_c.data_ptr<scalar_t>(),
                     out.h.data_ptr<scalar_t>(), batch, hidden, stream_of(gates)),
                 "lstm_forward");
  });
  return out;
}

std::pair<torch::Tensor, torch::Tensor> lstm_backward_cuda(
    const torch::Tensor& activations, const torch::Tensor& cell, const torch::Tensor& tanh_c,
    const torch::Tensor& mask, const torch::Tensor& grad_h, const torch::Tensor& grad_c) {
  const c10::cuda::CUDAGuard guard(cell.device());
  const int64_t batch = cell.size(0), hidden = cell.size(1);
  torch::Tensor grad_gates = torch::empty_like(activations);
  torch::Tensor grad_cell = torch::empty_like(cell);
  AT_DISPATCH_FLOATING_TYPES(cell.scalar_type(), "lstm_backward_cuda", [&] {
    check_launch(
        cuda_kernels::lstm_backward<scalar_t>(
            activations.data_ptr<scalar_t>(), cell.data_ptr<scalar_t>(),
            tanh_c.data_ptr<scalar_t>(), data_or_null<scalar_t>(mask), grad_h.data_ptr<scalar_t>(),
            grad_c.data_ptr<scalar_t>(), grad_gates.data_ptr<scalar_t>(),
            grad_cell.data_ptr<scalar_t>(), batch, hidden, stream_of(cell)),
        "lstm_backward");
  });
  return {grad_gates, grad_cell};
}

AttentionStepForward attention_forward_cuda(const torch::Tensor& location,
                                            const torch::Tensor& processed,
                                            const torch::Tensor& query, const torch::Tensor& v,
                                            const torch::Tensor& mask,
                                            const torch::Tensor& weights_and_cumulative) {
  const c10::cuda::CUDAGuard guard(location.device());
  const int64_t batch = location.size(0), dim = location.size(1), time = location.size(2);
  // The convolution's output and the query product are fresh tensors; contiguous() is a no-op
  // for them and a copy only for an input made otherwise.
  const torch::Tensor l = location.contiguous(), q = query.contiguous();
  AttentionStepForward out{torch::empty_like(l), torch::empty({batch, 1, time}, l.options()),
                           torch::empty_like(weights_and_cumulative)};
  AT_DISPATCH_FLOATING_TYPES(l.scalar_type(), "attention_forward_cuda", [&] {
    check_launch(cuda_kernels::attention_forward<scalar_t>(
                     l.data_ptr<scalar_t>(), processed.data_ptr<scalar_t>(), q.data_ptr<scalar_t>(),
                     v.data_ptr<scalar_t>(), mask.data_ptr<bool>(),
                     weights_and_cumulative.data_ptr<scalar_t>(),
                     out.activations.data_ptr<scalar_t>(), out.weights.data_ptr<scalar_t>(),
                     out.new_cumulative.data_ptr<scalar_t>(), batch, dim, time, stream_of(l)),
                 "attention_forward");
  });
  return out;
}

std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> attention_backward_cuda(
    const torch::Tensor& activations, const torch::Tensor& weights, const torch::Tensor& v,
    const torch::Tensor& grad_weights, const torch::Tensor& grad_cumulative,
    const torch::Tensor& grad_weights_out) {
  const c10::cuda::CUDAGuard guard(activations.device());
  const int64_t batch = activations.size(0), dim = activations.size(1), time = activations.size(2);
  torch::Tensor grad_energy = torch::empty({batch, time}, activations.options());
  torch::Tensor grad_score = torch::empty_like(activations);
  torch::Tensor grad_query = torch::empty({batch, dim}, activations.options());
  torch::Tensor grad_v_parts = torch::empty({batch, dim}, activations.options());
  AT_DISPATCH_FLOATING_TYPES(activations.scalar_type(), "attention_backward_cuda", [&] {
    check_launch(
        cuda_kernels::attention_backward<scalar_t>(
            activations.data_ptr<scalar_t>(), weights.data_ptr<scalar_t>(), v.data_ptr<scalar_t>(),
            grad_weights.data_ptr<scalar_t>(), data_or_null<scalar_t>(grad_cumulative),
            data_or_null<scalar_t>(grad_weights_out), grad_energy.data_ptr<scalar_t>(),
            grad_score.data_ptr<scalar_t>(), grad_query.data_ptr<scalar_t>(),
            grad_v_parts.data_ptr<scalar_t>(), batch, dim, time, stream_of(activations)),
        "attention_backward");
  });
  return {grad_score, grad_query, grad_v_parts.sum(0)};
}

}  // namespace

const StepKernels& cuda_step_kernels() {
  static const StepKernels kernels{lstm_forward_cuda, lstm_backward_cuda, attention_forward_cuda,
                                   attention_backward_cuda};
  return kernels;
}

}  // namespace tts::tacotron2::detail
