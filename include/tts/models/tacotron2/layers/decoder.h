// Tacotron-2's decoder: prenet, attention LSTM, attention, decoder LSTM and the frame and stop
// projections (NVIDIA/tacotron2's model.py architecture, our own code).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/rnn.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include <optional>
#include <utility>
#include <vector>

#include "tts/config/train_options.h"
#include "tts/models/family_sections.h"
#include "tts/models/tacotron2/layers/attention.h"
#include "tts/models/tacotron2/layers/batch_context.h"
#include "tts/models/tacotron2/layers/recurrent.h"
#include "tts/models/tacotron2/options.h"

namespace tts::tacotron2 {

// Prenet: 2 x (Linear without bias + ReLU + dropout). Dropout is always on, in training and in
// inference, as in NVIDIA's and Rayhane's models (it is what makes inference work).
class PrenetImpl : public torch::nn::Module {
 public:
  PrenetImpl(int64_t in_dim, int64_t dim, double p_dropout);
  // [..., in_dim] -> [..., dim]; with masks (each [..., dim], defined or not), those instead of
  // libtorch's dropout after each layer.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& mask0 = {},
                        const torch::Tensor& mask1 = {}, bool dropout = true);
  double p_dropout() const { return p_dropout_; }

 private:
  torch::nn::Linear layer0_{nullptr}, layer1_{nullptr};
  double p_dropout_;
};
TORCH_MODULE(Prenet);

// The recurrent state of the decoder between steps.
struct DecoderState {
  torch::Tensor attention_h, attention_c;  // [B, attention_rnn_dim]
  torch::Tensor decoder_h, decoder_c;      // [B, decoder_rnn_dim]
  torch::Tensor weights_and_cumulative;    // [B, 2, T_text]: previous and cumulative weights
  torch::Tensor context;                   // [B, encoder_embedding_dim]
};

// The gradients of what every decoder step reads (memory, processed memory, the location
// convolution, v, the decoder LSTM's bias), summed over the steps inside the fused step nodes
// (decoder_step.h) instead of one tensor per step and input that autograd adds up; all undefined
// when the steps do not sum them.
struct StepConstantGradients {
  torch::Tensor memory, processed_memory, location, v, decoder_bias;
  bool defined() const { return memory.defined(); }
};

// What the decoder produces, step-major as computed.
struct DecoderOutput {
  torch::Tensor mel;         // [B, T_mel, n_mels], T_mel = steps * r
  torch::Tensor gate;        // [B, T_mel] stop logits, one per frame
  torch::Tensor alignments;  // [B, steps, T_text]
};

// model.decoder_step for a model on `device`, as the decoder takes it (fused or composed): fused is
// the fused node on the CPU and composed elsewhere (CUDA's fused kernels have not run on a GPU
// yet); fused_cuda the fused node wherever it has kernels; composed as asked.
config::DecoderStep decoder_step_for(config::DecoderStep asked, const torch::Device& device);

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
  void set_recurrent_products(RecurrentProductPath path) { recurrent_products_ = path; }
  // `how` resolved for the device (decoder_step_for): fused (the node) or composed.
  void set_decoder_step(config::DecoderStep how);
  // Teacher forcing. memory [B, T_text, E]; mask [B, T_text] (true = padded text);
  // mel [B, T_mel, n_mels] with T_mel a multiple of r. `context`: keyed dropout (the LSTMs' in
  // training, the prenet's in either mode) and whether the prenet drops out; keyed, the masks
  // cover each row's decoder steps of its `mel_lengths` ([B] int64; needed only then).
  DecoderOutput forward(const torch::Tensor& memory, const torch::Tensor& mask,
                        const torch::Tensor& mel, const BatchContext& context = {},
                        const torch::Tensor& mel_lengths = {});
  // Greedy decoding with the prenet fed back. Stops an item when one of its step's r stop
  // probabilities exceeds gate_threshold, the batch when all items stopped or after
  // max_decoder_steps. Returns the output and the frames generated per item (int64 [B]).
  // `context` keyed: each item's prenet masks come from its own stream, over max_decoder_steps
  // steps whatever the batch (so that an item decodes the same alone or batched).
  std::pair<DecoderOutput, torch::Tensor> infer(const torch::Tensor& memory,
                                                const torch::Tensor& mask,
                                                const BatchContext& context = {});

 private:
  // Per-utterance-batch values that do not change from step to step.
  struct StepContext {
    torch::Tensor memory, processed_memory, mask, location;
    RecurrentWeight query_weight;      // the attention's query layer
    RecurrentWeight attention_weight;  // [4 H_att, E + H_att]: context and recurrent parts
    RecurrentWeight decoder_weight;    // [4 H_dec, H_att + E + H_dec]
    torch::Tensor decoder_bias;        // [4 H_dec]
    torch::Tensor v;                   // the attention's v [A]
    int64_t location_padding = 0;
    StepConstantGradients constant_gradients;
  };

 public:
  // Rows of greedy decoding stepped together, one decoder step at a time (infer's loop, and
  // speech that streams): rows join (join) and leave (keep) between steps, each decoding as it
  // would alone (its prenet masks keyed by its own utterance; up to rounding).
  struct Rows {
    torch::Tensor memory;           // [B, T_text, E]
    torch::Tensor mask;             // [B, T_text], true = padded text
    torch::Tensor prenet_masks[2];  // keyed: [B, max_decoder_steps, prenet_dim], else undefined
    bool prenet_dropout = true;     // unkeyed: libtorch's dropout in the prenet
    DecoderState state;
    torch::Tensor frame;         // [B, r * n_mels]: the previous step's frames (zeros first)
    std::vector<int64_t> steps;  // decoder steps each row has taken
    std::optional<StepContext> context;  // built at the first step after the rows changed
    int64_t size() const { return static_cast<int64_t>(steps.size()); }
  };
  // One step of every row: the r frames [B, r * n_mels], the stop logits [B, r] and the
  // attention weights [B, 1, T_text].
  struct RowsStep {
    torch::Tensor frames, gate, weights;
  };
  // Rows at their first step for memory [B, T_text, E] and mask [B, T_text]; `context` as infer's.
  Rows start(const torch::Tensor& memory, const torch::Tensor& mask, const BatchContext& context);
  RowsStep advance(Rows& rows);
  // Keeps the rows `kept` (indices into rows, in the order given); the text axis shrinks to the
  // longest kept text.
  void keep(Rows& rows, const std::vector<int64_t>& kept) const;
  // Appends `more` after `rows`, padding the text axis to the longer.
  void join(Rows& rows, Rows more) const;
  int64_t max_decoder_steps() const { return max_decoder_steps_; }
  double gate_threshold() const { return gate_threshold_; }

 private:
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

  RecurrentProductPath recurrent_products_ = config::Tacotron2Options{}.recurrent_products;
  config::DecoderStep decoder_step_ = config::DecoderStep::kFused;
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

}  // namespace tts::tacotron2
