// The CUDA kernels of the fused decoder step (decoder_step.cpp), behind a plain C++ interface:
// decoder_step_kernels.cu is compiled by nvcc without torch's headers, and
// fused_kernels_cuda.cpp wraps it for tensors. Every pointer is device memory, contiguous, of
// the sizes given; `stream` is the cudaStream_t to launch on. Each returns 0 or the CUDA error
// of its launch (error_string names it). Built only with CUDA (TTS_WITH_CUDA).
#pragma once

#include <cstdint>

namespace tts::tacotron2::cuda_kernels {

// The LSTM cell's element-wise part (cell_math::lstm_unit_forward) over [batch, hidden] units:
// gates [B, 4H] (i, f, g, o), previous_c [B, H], mask [B, H] or null -> activations [B, 4H], c,
// tanh_c, h [B, H].
template <class T>
int lstm_forward(const T* gates, const T* previous_c, const T* mask, T* activations, T* c,
                 T* tanh_c, T* h, int64_t batch, int64_t hidden, void* stream);

// Its backward (cell_math::lstm_unit_backward): -> grad_gates [B, 4H], grad_previous_c [B, H].
template <class T>
int lstm_backward(const T* activations, const T* previous_c, const T* tanh_c, const T* mask,
                  const T* grad_h, const T* grad_c, T* grad_gates, T* grad_previous_c,
                  int64_t batch, int64_t hidden, void* stream);

// The attention's scores, masked softmax and cumulative weights, one block per utterance:
// location, processed [B, A, T]; query [B, A]; v [A]; mask [B, T] (true: padding);
// weights_and_cumulative [B, 2, T] -> activations [B, A, T] (the tanh), weights [B, T],
// new_cumulative [B, 2, T] (this step's weights, the cumulative ones plus them).
template <class T>
int attention_forward(const T* location, const T* processed, const T* query, const T* v,
                      const bool* mask, const T* weights_and_cumulative, T* activations, T* weights,
                      T* new_cumulative, int64_t batch, int64_t dim, int64_t time, void* stream);

// Its backward, one block per utterance: the weights' gradient is grad_weights [B, T] (from the
// context product) plus both rows of grad_cumulative [B, 2, T] and grad_weights_out [B, T] (each
// may be null); grad_energy [B, T] is scratch -> grad_score [B, A, T] (of the tanh's argument),
// grad_query [B, A], grad_v_parts [B, A] (summed over B by the caller).
template <class T>
int attention_backward(const T* activations, const T* weights, const T* v, const T* grad_weights,
                       const T* grad_cumulative, const T* grad_weights_out, T* grad_energy,
                       T* grad_score, T* grad_query, T* grad_v_parts, int64_t batch, int64_t dim,
                       int64_t time, void* stream);

const char* error_string(int error);

}  // namespace tts::tacotron2::cuda_kernels
