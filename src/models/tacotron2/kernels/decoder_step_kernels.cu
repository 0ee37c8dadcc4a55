// The fused decoder step's CUDA kernels (decoder_step_kernels.h). The LSTM cells' arithmetic and
// the scores' gradient are cell_math.h's, the same functions the CPU kernels call; the scores'
// tanh and the softmax's exp are CUDA's tanhf/expf (the CPU's float tanh is a rational
// approximation), and the sums over text positions are block reductions in another order. What is
// CUDA's own here is the indexing and those reductions.
#include <cuda_runtime.h>

#include <cstdint>

#include "cell_math.h"
#include "decoder_step_kernels.h"

namespace tts::tacotron2::cuda_kernels {
namespace {

constexpr int kThreads = 256;  // per block: 8 warps
constexpr int kWarp = 32;

template <class T>
struct Sum {
  __device__ T operator()(T a, T b) const { return a + b; }
};
template <class T>
struct Max {
  __device__ T operator()(T a, T b) const { return a > b ? a : b; }
};

template <class T, class Op>
__device__ T warp_reduce(T value, Op op) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    value = op(value, __shfl_down_sync(0xffffffffu, value, offset));
  }
  return value;
}

// `value` reduced over the block (every thread calls it; every thread gets the result).
template <class T, class Op>
__device__ T block_reduce(T value, Op op, T identity) {
  __shared__ T partial[kThreads / kWarp];
  __shared__ T result;
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  value = warp_reduce(value, op);
  if (lane == 0) partial[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = lane < static_cast<int>(blockDim.x) / kWarp ? partial[lane] : identity;
    value = warp_reduce(value, op);
    if (lane == 0) result = value;
  }
  __syncthreads();
  const T out = result;
  __syncthreads();  // partial and result may be reused by the next call
  return out;
}

template <class T>
__global__ void lstm_forward_kernel(const T* gates, const T* previous_c, const T* mask,
                                    T* activations, T* c, T* tanh_c, T* h, int64_t batch,
                                    int64_t hidden) {
  const int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= batch * hidden) return;
  const int64_t b = k / hidden, j = k % hidden;
  const T* g = gates + b * 4 * hidden;
  const cell_math::LstmUnit<T> u =
      cell_math::lstm_unit_forward(g[j], g[hidden + j], g[2 * hidden + j], g[3 * hidden + j],
                                   previous_c[k], mask != nullptr ? mask[k] : T(1));
  cell_math::store_gates(activations + b * 4 * hidden, hidden, j, u.i, u.f, u.g, u.o);
  c[k] = u.c;
  tanh_c[k] = u.tanh_c;
  h[k] = u.h;
}

template <class T>
__global__ void lstm_backward_kernel(const T* activations, const T* previous_c, const T* tanh_c,
                                     const T* mask, const T* grad_h, const T* grad_c,
                                     T* grad_gates, T* grad_previous_c, int64_t batch,
                                     int64_t hidden) {
  const int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= batch * hidden) return;
  const int64_t b = k / hidden, j = k % hidden;
  const T* a = activations + b * 4 * hidden;
  const cell_math::LstmUnitGrad<T> d = cell_math::lstm_unit_backward(
      a[j], a[hidden + j], a[2 * hidden + j], a[3 * hidden + j], previous_c[k], tanh_c[k],
      mask != nullptr ? mask[k] : T(1), grad_h[k], grad_c[k]);
  cell_math::store_gates(grad_gates + b * 4 * hidden, hidden, j, d.i, d.f, d.g, d.o);
  grad_previous_c[k] = d.previous_c;
}

// Block b: utterance b. Each thread scores its text positions t (reading [b, a, t] across the
// threads' t: coalesced), then the block takes the masked maximum and the sum of the softmax.
template <class T>
__global__ void attention_forward_kernel(const T* location, const T* processed, const T* query,
                                         const T* v, const bool* mask,
                                         const T* weights_and_cumulative, T* activations,
                                         T* weights, T* new_cumulative, int64_t dim,
                                         int64_t time) {
  const int64_t b = blockIdx.x;
  const bool* m = mask + b * time;
  T* w = weights + b * time;
  T local_max = -INFINITY;
  for (int64_t t = threadIdx.x; t < time; t += blockDim.x) {
    T energy = 0;
    for (int64_t a = 0; a < dim; ++a) {
      const int64_t at = (b * dim + a) * time + t;
      const T activation = cell_math::tanh_of(location[at] + processed[at] + query[b * dim + a]);
      activations[at] = activation;
      energy += v[a] * activation;
    }
    w[t] = energy;
    if (!m[t] && energy > local_max) local_max = energy;
  }
  const T max = block_reduce(local_max, Max<T>(), T(-INFINITY));
  T local_sum = 0;
  for (int64_t t = threadIdx.x; t < time; t += blockDim.x) {
    const T e = m[t] ? T(0) : cell_math::exp_of(w[t] - max);
    w[t] = e;
    local_sum += e;
  }
  const T sum = block_reduce(local_sum, Sum<T>(), T(0));
  const T* previous = weights_and_cumulative + 2 * b * time;
  T* out = new_cumulative + 2 * b * time;
  for (int64_t t = threadIdx.x; t < time; t += blockDim.x) {
    const T weight = w[t] / sum;
    w[t] = weight;
    out[t] = weight;
    out[time + t] = previous[time + t] + weight;
  }
}

// Block b: utterance b. The weights' gradient and the softmax's (each thread its t), then one
// warp per attention channel a sums over t for the query's and v's gradients.
template <class T>
__global__ void attention_backward_kernel(const T* activations, const T* weights, const T* v,
                                          const T* grad_weights, const T* grad_cumulative,
                                          const T* grad_weights_out, T* grad_energy,
                                          T* grad_score, T* grad_query, T* grad_v_parts,
                                          int64_t dim, int64_t time) {
  const int64_t b = blockIdx.x;
  const T* w = weights + b * time;
  T* de = grad_energy + b * time;
  T local_dot = 0;
  for (int64_t t = threadIdx.x; t < time; t += blockDim.x) {
    T g = grad_weights[b * time + t];
    if (grad_cumulative != nullptr) {
      g += grad_cumulative[2 * b * time + t] + grad_cumulative[(2 * b + 1) * time + t];
    }
    if (grad_weights_out != nullptr) g += grad_weights_out[b * time + t];
    de[t] = g;
    local_dot += w[t] * g;
  }
  const T dot = block_reduce(local_dot, Sum<T>(), T(0));
  for (int64_t t = threadIdx.x; t < time; t += blockDim.x) de[t] = w[t] * (de[t] - dot);
  __syncthreads();  // every thread reads every t below
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const int warps = blockDim.x / kWarp;
  for (int64_t a = warp; a < dim; a += warps) {
    const T va = v[a];
    T q_sum = 0, v_sum = 0;
    for (int64_t t = lane; t < time; t += kWarp) {
      const int64_t at = (b * dim + a) * time + t;
      const T activation = activations[at];
      const T g = cell_math::score_gradient(de[t], va, activation);
      grad_score[at] = g;
      q_sum += g;
      v_sum += de[t] * activation;
    }
    q_sum = warp_reduce(q_sum, Sum<T>());
    v_sum = warp_reduce(v_sum, Sum<T>());
    if (lane == 0) {
      grad_query[b * dim + a] = q_sum;
      grad_v_parts[b * dim + a] = v_sum;
    }
  }
}

unsigned element_blocks(int64_t elements) {
  return static_cast<unsigned>((elements + kThreads - 1) / kThreads);
}

cudaStream_t as_stream(void* stream) { return static_cast<cudaStream_t>(stream); }

}  // namespace

template <class T>
int lstm_forward(const T* gates, const T* previous_c, const T* mask, T* activations, T* c,
                 T* tanh_c, T* h, int64_t batch, int64_t hidden, void* stream) {
  if (batch * hidden == 0) return 0;
  lstm_forward_kernel<T><<<element_blocks(batch * hidden), kThreads, 0, as_stream(stream)>>>(
      gates, previous_c, mask, activations, c, tanh_c, h, batch, hidden);
  return static_cast<int>(cudaGetLastError());
}

template <class T>
int lstm_backward(const T* activations, const T* previous_c, const T* tanh_c, const T* mask,
                  const T* grad_h, const T* grad_c, T* grad_gates, T* grad_previous_c,
                  int64_t batch, int64_t hidden, void* stream) {
  if (batch * hidden == 0) return 0;
  lstm_backward_kernel<T><<<element_blocks(batch * hidden), kThreads, 0, as_stream(stream)>>>(
      activations, previous_c, tanh_c, mask, grad_h, grad_c, grad_gates, grad_previous_c, batch,
      hidden);
  return static_cast<int>(cudaGetLastError());
}

template <class T>
int attention_forward(const T* location, const T* processed, const T* query, const T* v,
                      const bool* mask, const T* weights_and_cumulative, T* activations,
                      T* weights, T* new_cumulative, int64_t batch, int64_t dim, int64_t time,
                      void* stream) {
  if (batch == 0 || time == 0) return 0;
  attention_forward_kernel<T><<<static_cast<unsigned>(batch), kThreads, 0, as_stream(stream)>>>(
      location, processed, query, v, mask, weights_and_cumulative, activations, weights,
      new_cumulative, dim, time);
  return static_cast<int>(cudaGetLastError());
}

template <class T>
int attention_backward(const T* activations, const T* weights, const T* v, const T* grad_weights,
                       const T* grad_cumulative, const T* grad_weights_out, T* grad_energy,
                       T* grad_score, T* grad_query, T* grad_v_parts, int64_t batch, int64_t dim,
                       int64_t time, void* stream) {
  if (batch == 0 || time == 0) return 0;
  attention_backward_kernel<T><<<static_cast<unsigned>(batch), kThreads, 0, as_stream(stream)>>>(
      activations, weights, v, grad_weights, grad_cumulative, grad_weights_out, grad_energy,
      grad_score, grad_query, grad_v_parts, dim, time);
  return static_cast<int>(cudaGetLastError());
}

const char* error_string(int error) { return cudaGetErrorString(static_cast<cudaError_t>(error)); }

#define TTS_INSTANTIATE(T)                                                                        \
  template int lstm_forward<T>(const T*, const T*, const T*, T*, T*, T*, T*, int64_t, int64_t,    \
                               void*);                                                            \
  template int lstm_backward<T>(const T*, const T*, const T*, const T*, const T*, const T*, T*,   \
                                T*, int64_t, int64_t, void*);                                     \
  template int attention_forward<T>(const T*, const T*, const T*, const T*, const bool*,          \
                                    const T*, T*, T*, T*, int64_t, int64_t, int64_t, void*);      \
  template int attention_backward<T>(const T*, const T*, const T*, const T*, const T*, const T*, \
                                     T*, T*, T*, T*, int64_t, int64_t, int64_t, void*);
TTS_INSTANTIATE(float)
TTS_INSTANTIATE(double)
#undef TTS_INSTANTIATE

}  // namespace tts::tacotron2::cuda_kernels
