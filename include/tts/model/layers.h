// The building blocks of Tacotron-2 (NVIDIA/tacotron2's model.py architecture, our own code):
// encoder, location-sensitive attention, prenet, decoder, postnet and the optional CBHG linear
// head (Rayhane-mamah/Tacotron-2). Tacotron2 (tacotron2.h) assembles them.
//
// Layout conventions: batch first; time before channels for sequences ([B, T, C]) except inside
// convolutions. Lengths are int64 [B]. Masks are bool, true at padded positions.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/rnn.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include <utility>
#include <vector>

#include "tts/config/model_options.h"
#include "tts/config/train_options.h"

namespace tts::model {

// [B, T] bool, true where position >= length. `lengths` int64 [B].
torch::Tensor padding_mask(const torch::Tensor& lengths, int64_t max_length);

// The weight gradient of a StepWeight, summed over the steps of an utterance batch: the steps'
// backward buffer their input rows and output gradients, and every kGradientRows rows become one
// matrix product added to `sum` (step_linear.cpp). Tensors shared by the steps' autograd nodes;
// all undefined when no gradient is needed.
struct StepGradient {
  torch::Tensor sum;     // [in, out]
  torch::Tensor inputs;  // [kGradientRows, in] buffered input rows
  torch::Tensor grads;   // [kGradientRows, out] their output gradients
  torch::Tensor rows;    // int64 [1] on the CPU: rows buffered
  bool defined() const { return sum.defined(); }
};
// Rows buffered per weight-gradient product: enough for a BLAS GEMM to run near its peak, few
// enough that the buffers stay small (a few MB for the full-size decoder cells).
constexpr int64_t kGradientRows = 512;

// How step_linear computes its per-step products on the CPU (train.step_products): always by its
// small-batch kernel where it applies, always by libtorch's GEMM, or by the faster of the two
// (whose speed depends on the BLAS behind it), measured on the first product of each shape in
// the process. The model carries it (Tacotron2Impl::set_step_products, from its config) down to
// every weight it prepares: no process-wide setting.
using StepProductPath = config::StepProducts;

// A weight that every recurrent step multiplies with (see step_linear.cpp), prepared once per
// utterance batch from its parameters `first` [out, in_0] and optionally `second` [out, in_1]
// (concatenated along the input dimension); its products run by `path`.
struct StepWeight {
  torch::Tensor weight;    // [out, in] contiguous, no autograd history
  torch::Tensor weight_t;  // [in, out] contiguous; its autograd node delivers the gradient
  StepGradient gradient;
  StepProductPath path = StepProductPath::kGemm;
};
StepWeight make_step_weight(StepProductPath path, const torch::Tensor& first,
                            const torch::Tensor& second = {});

// base + x @ weight.t() for x [B, in] and base [B, out], [out] or undefined (nothing added), with
// the gradients of torch::addmm (checked against it by the tests).
torch::Tensor step_linear(const StepWeight& weight, const torch::Tensor& base,
                          const torch::Tensor& x);

// The widest vector instructions the float kernel may use: the best the CPU has (AVX-512, else
// AVX2 + FMA, else portable C++; the default), or at most AVX2, or none (tests run each path).
enum class StepKernelIsa { kBest, kAvx2, kPortable };
void set_step_kernel_isa(StepKernelIsa isa);

// torch::nn::LSTM `lstm` (one layer, bidirectional, batch first) over x [B, T, I] with lengths
// [B], as over packed sequences: [B, T, 2H], zero at padded positions, the backward direction
// starting at each item's last position. Written with step_linear and lstm_cell_pointwise (one
// input projection for all steps, small-batch kernels per step), on `lstm`'s parameters.
torch::Tensor bidirectional_lstm(torch::nn::LSTM& lstm, const torch::Tensor& x,
                                 const torch::Tensor& lengths, StepProductPath path);

// Encoder: `encoder_n_convolutions` x (Conv1d + BatchNorm + ReLU + dropout), then a BiLSTM of
// encoder_embedding_dim/2 units per direction over the packed sequences. With
// zero_padding_in_convolutions, padded positions are zeroed before every convolution, so an
// item's output does not depend on how much padding the batch gives it (in eval mode; BatchNorm's
// batch statistics do in training mode); without, as NVIDIA's, the convolutions see the padding
// symbol's embedding.
class EncoderImpl : public torch::nn::Module {
 public:
  explicit EncoderImpl(const config::ModelOptions& options);
  // embedded [B, T_text, symbols_embedding_dim], lengths [B] -> [B, T_text, encoder_embedding_dim],
  // zero at padded positions.
  torch::Tensor forward(const torch::Tensor& embedded, const torch::Tensor& lengths);
  void set_step_products(StepProductPath path) { step_products_ = path; }

 private:
  StepProductPath step_products_ = config::TrainOptions{}.step_products;
  std::vector<torch::nn::Conv1d> convolutions_;
  std::vector<torch::nn::BatchNorm1d> norms_;
  torch::nn::LSTM lstm_{nullptr};
  double p_dropout_;
  bool zero_padding_;
};
TORCH_MODULE(Encoder);

// The attention weights of one step: softmax over T_text of v . tanh(location + processed +
// query), -inf where masked. location, processed [B, A, T_text]; query [B, A]; v [1, A] or [A];
// mask [B, 1, T_text] bool (true = padded) -> [B, 1, T_text]. One autograd node on CPU
// (attention_score.cpp), composed torch ops elsewhere.
torch::Tensor attention_weights(const torch::Tensor& location, const torch::Tensor& processed,
                                const torch::Tensor& query, const torch::Tensor& v,
                                const torch::Tensor& mask);

// Location-sensitive attention (Chorowski et al. 2015) with cumulative weights. Parameters as
// NVIDIA's: query_layer, memory_layer, v, location_conv, location_dense (all without bias). The
// location convolution and its dense projection are both linear, so step() applies them as one
// convolution whose weight location_weight() composes once per utterance batch.
class AttentionImpl : public torch::nn::Module {
 public:
  AttentionImpl(int64_t query_dim, int64_t memory_dim, int64_t attention_dim, int64_t n_filters,
                int64_t kernel_size);
  // memory [B, T_text, E] -> processed memory [B, attention_dim, T_text] (computed once).
  torch::Tensor process_memory(const torch::Tensor& memory);
  // location_dense o location_conv as one convolution weight [attention_dim, 2, kernel_size].
  torch::Tensor location_weight();
  // query_layer's weight prepared for step() (once per utterance batch).
  StepWeight query_weight(StepProductPath path);
  // One step. query_weight from query_weight(); query [B, query_dim]; processed [B, A, T_text];
  // memory [B, T_text, E];
  // previous_and_cumulative [B, 2, T_text]; location [A, 2, K]; mask [B, 1, T_text].
  // Returns (context [B, E], weights [B, 1, T_text]).
  std::pair<torch::Tensor, torch::Tensor> step(
      const StepWeight& query_weight, const torch::Tensor& query, const torch::Tensor& processed,
      const torch::Tensor& memory, const torch::Tensor& previous_and_cumulative,
      const torch::Tensor& location, const torch::Tensor& mask);

 private:
  torch::nn::Linear query_layer_{nullptr}, memory_layer_{nullptr}, v_{nullptr};
  torch::nn::Conv1d location_conv_{nullptr};
  torch::nn::Linear location_dense_{nullptr};
  int64_t padding_;
};
TORCH_MODULE(Attention);

// Prenet: 2 x (Linear without bias + ReLU + dropout). Dropout is always on, in training and in
// inference, as in NVIDIA's and Rayhane's models (it is what makes inference work).
class PrenetImpl : public torch::nn::Module {
 public:
  PrenetImpl(int64_t in_dim, int64_t dim, double p_dropout);
  // [..., in_dim] -> [..., dim]
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::nn::Linear layer0_{nullptr}, layer1_{nullptr};
  double p_dropout_;
};
TORCH_MODULE(Prenet);

// The parameters of an LSTM cell, laid out as torch::nn::LSTMCell's (weight_ih [4H, I],
// weight_hh [4H, H], bias_ih, bias_hh; gates i, f, g, o), applied by hand so that input
// projections that do not depend on the step can be computed for all steps at once.
class LSTMCellImpl : public torch::nn::Module {
 public:
  LSTMCellImpl(int64_t input_size, int64_t hidden_size);
  torch::Tensor weight_ih, weight_hh, bias_ih, bias_hh;
};
TORCH_MODULE(LSTMCell);

// The element-wise part of an LSTM cell as one autograd node: gates [B, 4H] (pre-activations
// i, f, g, o, as torch::nn::LSTMCell), cell [B, H], dropout_mask [B, H] (scaled 0 or 1/(1-p))
// or undefined -> (h [B, H] multiplied by the mask, c [B, H]).
std::pair<torch::Tensor, torch::Tensor> lstm_cell_pointwise(const torch::Tensor& gates,
                                                            const torch::Tensor& cell,
                                                            const torch::Tensor& dropout_mask);

// The recurrent state of the decoder between steps.
struct DecoderState {
  torch::Tensor attention_h, attention_c;  // [B, attention_rnn_dim]
  torch::Tensor decoder_h, decoder_c;      // [B, decoder_rnn_dim]
  torch::Tensor weights_and_cumulative;    // [B, 2, T_text]: previous and cumulative weights
  torch::Tensor context;                   // [B, encoder_embedding_dim]
};

// What the decoder produces, step-major as computed.
struct DecoderOutput {
  torch::Tensor mel;         // [B, T_mel, n_mels], T_mel = steps * r
  torch::Tensor gate;        // [B, T_mel] stop logits, one per frame
  torch::Tensor alignments;  // [B, steps, T_text]
};

// Decoder: prenet, attention LSTM, location-sensitive attention, decoder LSTM, and the mel
// (n_mels * r) and stop (r) projections of [decoder_h, context]. Each step consumes the r frames
// of the previous step (all r, as NVIDIA's model) and predicts the next r frames.
class DecoderImpl : public torch::nn::Module {
 public:
  // `max_r` > 0 builds the decoder for any r up to max_r (gradual training, train.r_schedule):
  // the prenet reads the last frame of the previous step, the projections predict max_r frames
  // of which the first r are used. 0: for r = n_frames_per_step alone, NVIDIA's layout.
  DecoderImpl(const config::ModelOptions& options, int64_t n_mels, int64_t max_r = 0);
  // Switches the frames per step; only a decoder built with max_r >= r can.
  void set_r(int64_t r);
  int64_t r() const { return r_; }
  void set_step_products(StepProductPath path) { step_products_ = path; }
  // Teacher forcing. memory [B, T_text, E]; mask [B, T_text] (true = padded text);
  // mel [B, T_mel, n_mels] with T_mel a multiple of r.
  DecoderOutput forward(const torch::Tensor& memory, const torch::Tensor& mask,
                        const torch::Tensor& mel);
  // Greedy decoding with the prenet fed back. Stops an item when one of its step's r stop
  // probabilities exceeds gate_threshold, the batch when all items stopped or after
  // max_decoder_steps. Returns the output and the frames generated per item (int64 [B]).
  std::pair<DecoderOutput, torch::Tensor> infer(const torch::Tensor& memory,
                                                const torch::Tensor& mask);

 private:
  // Per-utterance-batch values that do not change from step to step.
  struct StepContext {
    torch::Tensor memory, processed_memory, mask, location;
    StepWeight query_weight;      // the attention's query layer
    StepWeight attention_weight;  // [4 H_att, E + H_att]: context and recurrent parts
    StepWeight decoder_weight;    // [4 H_dec, H_att + E + H_dec]
    torch::Tensor decoder_bias;   // [4 H_dec]
  };
  StepContext step_context(const torch::Tensor& memory, const torch::Tensor& mask);
  DecoderState initial_state(const torch::Tensor& memory);
  // Input gates of the attention LSTM from prenet outputs [..., prenet_dim] -> [..., 4 H_att]
  // (prenet part of weight_ih plus both biases).
  torch::Tensor attention_input_gates(const torch::Tensor& prenet_out);
  // Advances `state` by one step given the attention LSTM's input gates [B, 4 H_att] and the
  // dropout masks of both LSTM outputs (undefined: no dropout); returns the step's attention
  // weights [B, 1, T_text].
  torch::Tensor step(const StepContext& context, const torch::Tensor& input_gates,
                     const torch::Tensor& attention_mask, const torch::Tensor& decoder_mask,
                     DecoderState& state);
  // Scaled dropout masks [shape[0]] x [shape[1:]], drawn at once; undefined when not training.
  std::vector<torch::Tensor> dropout_masks(double p, std::vector<int64_t> shape,
                                           const torch::TensorOptions& options);
  // [..., decoder_rnn_dim + E] -> (mel [..., n_mels * r], gate [..., r])
  std::pair<torch::Tensor, torch::Tensor> project(const torch::Tensor& hidden_and_context);
  // What the prenet reads of a step's frames [..., r * n_mels]: all of them, or the last one
  // when built for a schedule of r.
  torch::Tensor prenet_input(const torch::Tensor& frames) const;

  StepProductPath step_products_ = config::TrainOptions{}.step_products;
  int64_t max_r_;  // 0: built for r_ alone
  int64_t n_mels_, r_, prenet_dim_, encoder_dim_, attention_rnn_dim_, decoder_rnn_dim_;
  int64_t max_decoder_steps_;
  double gate_threshold_, p_attention_dropout_, p_decoder_dropout_;
  Prenet prenet_{nullptr};
  LSTMCell attention_rnn_{nullptr};
  Attention attention_layer_{nullptr};
  LSTMCell decoder_rnn_{nullptr};
  torch::nn::Linear linear_projection_{nullptr}, gate_layer_{nullptr};
};
TORCH_MODULE(Decoder);

// Postnet: `postnet_n_convolutions` x (Conv1d + BatchNorm), tanh on all but the last, dropout
// after each. Predicts a residual added to the decoder's mel. With zero_padding_in_convolutions,
// padded frames are zeroed before every convolution, as in the encoder; without, as NVIDIA's, the
// convolutions see what the decoder produced there. With model.nvidia_postnet_gradient (and
// without zero padding), the first convolution's weight gradient is taken from the input with its
// padded frames zeroed, while its output (and every other gradient) is computed from the input as
// it is: what NVIDIA's training computes, whose mask_padding zeroes the decoder's outputs in place
// (through `.data`) after the postnet has read them, under the tensor its convolution saved for
// backward.
class PostnetImpl : public torch::nn::Module {
 public:
  PostnetImpl(const config::ModelOptions& options, int64_t n_mels);
  // mel [B, T, n_mels], lengths [B] -> residual [B, T, n_mels], zero at padded frames.
  torch::Tensor forward(const torch::Tensor& mel, const torch::Tensor& lengths);

 private:
  std::vector<torch::nn::Conv1d> convolutions_;
  std::vector<torch::nn::BatchNorm1d> norms_;
  double p_dropout_;
  bool zero_padding_;
  bool nvidia_gradient_;
};
TORCH_MODULE(Postnet);

// CBHG (Lee et al. 2017) as Rayhane's post-processing network: a bank of Conv1d+BatchNorm+ReLU
// with kernels 1..cbhg_kernels, max-pooling (2, stride 1), two projection convolutions (kernel 3)
// back to the input size, a residual connection, a dense layer to cbhg_rnn_units, highway layers
// of that size, a BiGRU of cbhg_rnn_units per direction, and a dense layer to n_linear.
class CBHGImpl : public torch::nn::Module {
 public:
  CBHGImpl(const config::ModelOptions& options, int64_t in_dim, int64_t out_dim);
  // x [B, T, in_dim], lengths [B] -> [B, T, out_dim], zero at padded frames.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& lengths);

 private:
  std::vector<torch::nn::Conv1d> bank_;
  std::vector<torch::nn::BatchNorm1d> bank_norms_;
  torch::nn::Conv1d projection0_{nullptr}, projection1_{nullptr};
  torch::nn::BatchNorm1d projection0_norm_{nullptr}, projection1_norm_{nullptr};
  torch::nn::Linear highway_input_{nullptr};
  std::vector<std::pair<torch::nn::Linear, torch::nn::Linear>> highways_;  // (H, T)
  torch::nn::GRU gru_{nullptr};
  torch::nn::Linear output_{nullptr};
};
TORCH_MODULE(CBHG);

}  // namespace tts::model
