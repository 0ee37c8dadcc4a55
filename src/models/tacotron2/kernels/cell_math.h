// The element-wise arithmetic of the decoder step's fused kernels, in one place for the CPU
// kernels (lstm_cell.cpp, attention_score.cpp) and the CUDA ones (decoder_step_kernels.cu): the
// LSTM cell's element forward and backward and the attention score's gradient. Plain C++ (no
// torch), callable on the host and, compiled by nvcc, on the device; float and double.
#pragma once

#include <math.h>

#if defined(__CUDACC__)
#define TTS_HOST_DEVICE __host__ __device__
#else
#define TTS_HOST_DEVICE
#endif

namespace tts::tacotron2::cell_math {

// The C library's functions by type: expf/tanhf for float (what std::exp and std::tanh of a float
// call), exp/tanh for double; CUDA's device versions under nvcc.
TTS_HOST_DEVICE inline float exp_of(float x) { return expf(x); }
TTS_HOST_DEVICE inline double exp_of(double x) { return exp(x); }
TTS_HOST_DEVICE inline float tanh_of(float x) { return tanhf(x); }
TTS_HOST_DEVICE inline double tanh_of(double x) { return tanh(x); }

template <class T>
TTS_HOST_DEVICE inline T sigmoid(T x) {
  return T(1) / (T(1) + exp_of(-x));
}

// One unit of an LSTM cell: the gates' pre-activations (i, f, g, o) and the previous cell state
// in; the activations, the new cell state, its tanh and the output h (times the dropout mask
// value `mask`, 1 without dropout) out.
template <class T>
struct LstmUnit {
  T i, f, g, o;  // activations: sigmoid, sigmoid, tanh, sigmoid
  T c, tanh_c, h;
};

template <class T>
TTS_HOST_DEVICE inline LstmUnit<T> lstm_unit_forward(T gate_i, T gate_f, T gate_g, T gate_o,
                                                     T previous_c, T mask) {
  LstmUnit<T> u;
  u.i = sigmoid(gate_i);
  u.f = sigmoid(gate_f);
  u.g = tanh_of(gate_g);
  u.o = sigmoid(gate_o);
  u.c = u.f * previous_c + u.i * u.g;
  u.tanh_c = tanh_of(u.c);
  u.h = u.o * u.tanh_c * mask;
  return u;
}

// Writes a unit's four gate values (activations or gradients) into its row of a [B, 4H] tensor:
// gate k of unit j at k * hidden + j.
template <class T, class Index>
TTS_HOST_DEVICE inline void store_gates(T* row, Index hidden, Index j, T i, T f, T g, T o) {
  row[j] = i;
  row[hidden + j] = f;
  row[2 * hidden + j] = g;
  row[3 * hidden + j] = o;
}

// Its gradients: of the four pre-activations and of the previous cell state, from the saved
// activations, the previous cell state, tanh(c), the mask value and the gradients of h and c.
template <class T>
struct LstmUnitGrad {
  T i, f, g, o;
  T previous_c;
};

template <class T>
TTS_HOST_DEVICE inline LstmUnitGrad<T> lstm_unit_backward(T i, T f, T g, T o, T previous_c,
                                                          T tanh_c, T mask, T grad_h, T grad_c) {
  const T dh = grad_h * mask;
  const T dc = grad_c + dh * o * (1 - tanh_c * tanh_c);
  LstmUnitGrad<T> d;
  d.i = dc * g * i * (1 - i);
  d.f = dc * previous_c * f * (1 - f);
  d.g = dc * i * (1 - g * g);
  d.o = dh * tanh_c * o * (1 - o);
  d.previous_c = dc * f;
  return d;
}

// The gradient of the attention score's tanh argument at one (a, t): the energy's gradient
// `grad_energy`, v[a] and the saved activation tanh(...).
template <class T>
TTS_HOST_DEVICE inline T score_gradient(T grad_energy, T v, T activation) {
  return grad_energy * v * (1 - activation * activation);
}

}  // namespace tts::tacotron2::cell_math
